import { wrapLabel } from './labels';

const widest = (lines: string[]) => Math.max(...lines.map((line) => Array.from(line).length));

describe('wrapLabel', () => {
  it('leaves a label that fits on one line', () => {
    expect(wrapLabel('triage', 17)).toEqual(['triage']);
    expect(wrapLabel('exactly-seventeen', 17)).toEqual(['exactly-seventeen']);
    expect(wrapLabel('', 17)).toEqual([]);
  });

  it('breaks between words and keeps every word whole', () => {
    expect(wrapLabel('Low confidence: intent', 16)).toEqual(['Low confidence:', 'intent']);
    expect(wrapLabel('v3 · rule 1: intent equals refund', 16)).toEqual(['v3 · rule 1:', 'intent equals', 'refund']);
    expect(wrapLabel('Refund triage for enterprise customers', 14)).toEqual(['Refund triage', 'for enterprise', 'customers']);
  });

  it('breaks a slug after its hyphens, so names sharing a prefix stay told apart by what follows', () => {
    const europe = wrapLabel('Decision refund-triage-for-europe', 14);
    expect(europe).toEqual(['Decision', 'refund-triage-', 'for-europe']);
    expect(europe.join('').replace('Decisionrefund', 'Decision refund')).toBe('Decision refund-triage-for-europe');
    expect(wrapLabel('Decision refund-triage-for-asia', 14)).toEqual(['Decision', 'refund-triage-', 'for-asia']);
  });

  it('splits a run with no break where the line is full, dropping nothing and never adding an ellipsis', () => {
    const lines = wrapLabel('Deleted decision dec_01HX8Q3ZK4N7V2B9', 14);
    expect(widest(lines)).toBeLessThanOrEqual(14);
    expect(lines.join(' ').replace(/\s+/g, '')).toBe('Deleteddecisiondec_01HX8Q3ZK4N7V2B9');
    expect(lines.some((line) => line.includes('…'))).toBe(false);
  });

  it('never splits a character made of two code units', () => {
    expect(wrapLabel('🙂🙂🙂🙂🙂🙂🙂', 3)).toEqual(['🙂🙂🙂', '🙂🙂🙂', '🙂']);
  });

  it('keeps every line within the width for any label', () => {
    for (const label of ['Engine error: ENGINE_TIMEOUT', 'Other option: previous_tickets_and_more', 'a b c d e f g h', 'x'.repeat(40)]) {
      for (const width of [6, 10, 18]) {
        const lines = wrapLabel(label, width);
        expect(widest(lines)).toBeLessThanOrEqual(width);
        expect(lines.join('').replace(/\s+/g, '')).toBe(label.replace(/\s+/g, ''));
      }
    }
  });
});
