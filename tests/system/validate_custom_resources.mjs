// Reads a JSON array of Kubernetes objects on stdin and validates each ServiceMonitor and
// PrometheusRule against the Prometheus Operator's CRD schemas (@kubernetes-models/prometheus-operator,
// installed by `make tools`). Prints one line per object; exits 1 if any fails.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const models = join(process.argv[2], "node_modules/@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1");
const kinds = {};
for (const kind of ["ServiceMonitor", "PrometheusRule"]) {
  kinds[kind] = (await import(pathToFileURL(join(models, `${kind}.js`)).href))[kind];
}
let failed = 0;
for (const object of JSON.parse(readFileSync(0, "utf8"))) {
  const Model = kinds[object.kind];
  if (!Model) continue;
  try {
    new Model(object).validate();
    console.log(`ok ${object.kind}/${object.metadata.name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${object.kind}/${object.metadata.name}: ${error.message}`);
  }
}
process.exit(failed ? 1 : 0);
