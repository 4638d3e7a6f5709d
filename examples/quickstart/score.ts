// Scores room.json with fetch, typed by openapi-typescript's types for openapi.yaml, and branches on
// a 422's fault codes. Compile: tsc -p examples/quickstart; run: node examples/quickstart/score.js.
import { readFileSync } from "node:fs";
import type { components, paths } from "./maubinh";

type ScoreBody = paths["/v1/score"]["post"]["requestBody"]["content"]["application/json"];
type Scored = paths["/v1/score"]["post"]["responses"]["200"]["content"]["application/json"];
type Refused = components["schemas"]["ValidationProblem"];

const base = process.env.MAUBINH_URL ?? "http://127.0.0.1:8000";
const read = (name: string): ScoreBody => JSON.parse(readFileSync(new URL(name, import.meta.url), "utf8"));

async function score(body: ScoreBody): Promise<Scored | Refused> {
  const answer = await fetch(`${base}/v1/score`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await answer.json()) as Scored | Refused;
}

const scored = (await score(read("room.json"))) as Scored;
console.log(`${scored.ruleset.id}@${scored.ruleset.version}: ` + scored.players.map((p) => `${p.id} ${p.amount}`).join(", "));
const refused = (await score(read("bad-room.json"))) as Refused;
for (const fault of refused.errors) {
  const kind = fault.code === "duplicate_card" ? "dealt twice" : fault.code === "unknown_field" ? "a typo" : fault.code;
  console.log(`${fault.pointer}: ${kind}: ${fault.message}`);
}
