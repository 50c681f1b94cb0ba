// graphql-codegen's client preset, with its defaults, over the schema a
// running server introspects (ALGOITNY_URL, the /query endpoint).
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: process.env.ALGOITNY_URL ?? "http://localhost:8080/query",
  documents: ["src/**/*.ts", "!src/gql/**/*"],
  ignoreNoDocuments: false,
  generates: {
    "./src/gql/": { preset: "client" },
  },
};

export default config;
