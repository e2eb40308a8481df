import { fitLabel } from './labels';

describe('fitLabel', () => {
  it('leaves a label that fits as it is', () => {
    expect(fitLabel('triage', 17)).toBe('triage');
    expect(fitLabel('exactly-seventeen', 17)).toBe('exactly-seventeen');
    expect(fitLabel('', 17)).toBe('');
  });

  it('cuts a long label in the middle so that its start and end both show', () => {
    const europe = fitLabel('refund-triage-for-europe', 17);
    const asia = fitLabel('refund-triage-for-asia', 17);
    expect(Array.from(europe)).toHaveLength(17);
    expect(europe).toBe('refund-t…r-europe');
    expect(asia).toBe('refund-t…for-asia');
    expect(europe).not.toBe(asia);
  });

  it('never splits a character made of two code units', () => {
    const label = fitLabel('🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂', 5);
    expect(label).toBe('🙂🙂…🙂🙂');
  });

  it('drops the spaces next to the ellipsis', () => {
    expect(fitLabel('Refund triage for enterprise customers', 15)).toBe('Refund…stomers');
    expect(fitLabel('Refund triage for all customers', 13)).toBe('Refund…tomers');
    expect(fitLabel('Alpha beta gamma delta', 13)).toBe('Alpha…delta');
  });

  it('gives an ellipsis alone when nothing else fits', () => {
    expect(fitLabel('anything', 1)).toBe('…');
    expect(fitLabel('anything', 0)).toBe('…');
  });
});
