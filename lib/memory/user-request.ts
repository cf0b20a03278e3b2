// Whether the user's own message asks to remember or to forget something. The chat model's `remember` and `forget`
// tools exist for those requests, but the model also reads text the user never wrote (a recalled passage of an
// imported chat, a tool's result) that can tell it to call them. A call the user's message did not ask for is not
// refused, only turned into a proposal the user approves on the memory page (lib/memory/writes.ts): a missed
// wording costs one click, an injected "remember that…" never reaches the prompt of every later answer.

/** Requests to keep something, in the languages people most often chat in. */
const REMEMBER = [
  /\b(remember|memori[sz]e|note (that|this|it|down)|make a note|take (a )?note|for the record)\b/iu,
  /\b(keep|bear) ((this|that|it) )?in mind\b|\b(write|jot) (this|that|it) down\b|\badd (this|that|it) to (your )?memory\b/iu,
  /\b(don'?t|do not|never) forget\b/iu,
  /\b(save|store|add|keep|put) (this|that|it)\b[^.!?\n]{0,40}\b(memor(y|ies)|mind|profile)\b/iu,
  /\b(from now on|going forward|for future reference|in (the )?future|next time)\b/iu,
  // French, Spanish, Portuguese, Italian, German, Dutch
  /\b(souviens|rappelle[- ]toi|retiens|mémorise|n'oublie pas|désormais|l'avenir|dorénavant)/iu,
  /\b(recuerda|acuérdate|memoriza|no olvides|apunta|anota|a partir de ahora|de ahora en adelante)/iu,
  /\b(lembr[ae]|lembre-se|memoriz[ae]|não (se )?esque[çc]a|anot[ae]|a partir de agora|daqui em diante)/iu,
  /\b(ricorda|ricordati|memorizza|non dimenticare|annota|d'ora in poi|da ora in poi|d'ora in avanti)/iu,
  /\b(merk dir|merke dir|vergiss nicht|speicher|notier|ab jetzt|in zukunft|künftig)/iu,
  /\b(onthoud|vergeet niet|voortaan|vanaf nu)/iu,
  // Russian, Chinese, Japanese, Korean
  /(запомни|не забудь|впредь|отныне)/iu,
  /(记住|記住|记得|記得|别忘|別忘|不要忘|以后|以後)/u,
  /(覚えて|おぼえて|忘れないで|記憶して|これから)/u,
  /(기억해|잊지 마|앞으로)/u,
];

/** Requests to drop something already known. */
const FORGET = [
  /\b(forget|unlearn)\b/iu,
  // Everyday verbs ("remove a stain") count only about what Mnemo holds: that, my…, memories, what you know.
  /\b(erase|delete|remove|wipe|clear|drop)\b[^.!?\n]{0,30}\b(memor(y|ies)|that|this|it|my|me|everything|all|what you)\b/iu,
  /\b(no longer|not anymore|isn'?t true|is wrong|was wrong|don'?t remember)\b/iu,
  /\b(oublie|efface|supprime|olvida|borra|elimina|esquece|esqueça|apaga|dimentica|cancella|vergiss|lösch|vergeet|verwijder)/iu,
  /(забудь|удали|忘记|忘記|忘掉|删除|刪除|忘れて|削除|잊어|삭제)/u,
];

/** Words that name what follows a colon as material to work on, not as the user's request: "summarise this: …". */
const MATERIAL =
  /\b(this|these|that|it|the following|following|below|article|text|email|e-mail|letter|message|document|doc|page|post|passage|paragraph|paper|story|essay|transcript|chat|conversation|code|file|note|notes|list|review|summary|content|quote|translation)\s*:\s*$/iu;

/** A message this long past its request is a pasted document: only its start and its end are the user's own words. */
const OWN_WORDS_EDGE = 400;

/**
 * The part of a message the user typed as their own request, without what they pasted or quoted: fenced code, quoted
 * lines ("> …"), HTML comments and tags, text in quotation marks, the material after "summarise this article:", and
 * the middle of a long paste. A request to remember or to forget counts only here: text the user brought in (an
 * article, an email, a page) can ask a model for anything.
 */
export function ownWords(message: string): string {
  // A pasted document of megabytes: its ends are all that could hold the request.
  const ends = message.length > 40_000 ? `${message.slice(0, 20_000)}\n${message.slice(-20_000)}` : message;
  let s = ends
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .replace(/~~~[\s\S]*?(~~~|$)/g, " ")
    .replace(/<!--[\s\S]*?(-->|$)/g, " ")
    .replace(/<[a-z/!][^>]*>/gi, " ")
    .replace(/^\s*>.*$/gm, " ")
    .replace(/"[^"\n]{0,2000}"|“[^”]{0,2000}”|«[^»]{0,2000}»|„[^“”]{0,2000}[“”]|「[^」]{0,2000}」/g, " ");
  // "Please summarise this article: In the future, batteries…": what follows is the article, not the request.
  for (const m of s.matchAll(/:/g)) {
    const before = s.slice(0, m.index);
    const after = s.slice(m.index + 1);
    if (MATERIAL.test(before + ":") || after.trim().length > OWN_WORDS_EDGE) {
      s = before;
      break;
    }
  }
  if (s.length > 3 * OWN_WORDS_EDGE) s = `${s.slice(0, OWN_WORDS_EDGE)}\n${s.slice(-OWN_WORDS_EDGE)}`;
  return s;
}

/** The user's own words ask to remember something (the `remember` tool may act on it). */
export const asksToRemember = (message: string) => REMEMBER.some((r) => r.test(ownWords(message)));

/** "Don't forget…" asks to keep, not to forget. */
const DO_NOT_FORGET =
  /\b(don'?t|do not|never) forget\b|vergiss nicht|n'oublie pas|no olvides|não (se )?esque[çc]a|non dimenticare|vergeet niet|не забудь|别忘|別忘|不要忘|忘れないで|잊지 마/giu;

/** The user's message asks to forget something, or says a memory is no longer so (the `forget` tool may act on it). */
export function asksToForget(message: string): boolean {
  const asked = ownWords(message).replace(DO_NOT_FORGET, " ");
  return FORGET.some((r) => r.test(asked));
}
