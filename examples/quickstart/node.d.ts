// The two Node built-ins score.ts reads, declared here so that it compiles with no @types/node.
declare module "node:fs" {
  export function readFileSync(path: URL, encoding: "utf8"): string;
}
declare const process: { env: Record<string, string | undefined> };
