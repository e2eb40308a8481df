/**
 * The one spelling of an e-mail address the gateway stores and compares: Unicode NFC, then full case folding,
 * so that a composed and a decomposed `é`, `Straße` and `STRASSE`, or `K` and the Kelvin sign are one address.
 * JavaScript has no case-folding primitive; upper- then lower-casing each code point on its own (twice, for the
 * few letters whose upper case folds further, like `ẞ`) gives Unicode's full folding for e-mail's purposes and
 * avoids `toLowerCase`'s final-sigma rule, which would spell one address two ways depending on its position.
 */
export function canonicalEmail(address: string): string {
  let folded = address.normalize('NFC');
  for (let pass = 0; pass < 2; pass++) {
    folded = Array.from(folded, (character) => character.toUpperCase().toLowerCase()).join('');
  }
  return folded.normalize('NFC');
}
