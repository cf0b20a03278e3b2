// wink-lexicon ships WordNet's exception lists as CommonJS objects (an inflected form to its lemma), without types.
declare module "wink-lexicon/src/wn-verb-exceptions.js" {
  const forms: Record<string, string>;
  export = forms;
}
declare module "wink-lexicon/src/wn-noun-exceptions.js" {
  const forms: Record<string, string>;
  export = forms;
}
