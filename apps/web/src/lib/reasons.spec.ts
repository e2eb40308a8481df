import { translate } from './i18n';
import { reasonMessage } from './reasons';

const share = (value: number) => `${Math.round(value * 100)}%`;
const words = (reason: unknown, action: unknown) => {
  const message = reasonMessage(reason, action, share);
  return message ? translate('en', message.key, message.vars) : null;
};

describe('reasonMessage', () => {
  it('says a run that no policy matched continues, without calling it the fallback', () => {
    const text = words({ type: 'default' }, 'continue')!;
    expect(text).toMatch(/^no policy matched, so the action is continue/);
    expect(text).not.toContain('fallback');
  });

  it('names the fallback action where the fallback was taken', () => {
    expect(words({ type: 'other_option', question: 'intent' }, 'escalate')).toBe('intent was answered "other", so the fallback action escalate was taken');
    expect(words({ type: 'low_confidence', question: 'intent', confidence: 0.42, minConfidence: 0.7 }, 'escalate')).toBe(
      'intent was answered with 42% confidence, under its minimum of 70%, so the fallback action escalate was taken',
    );
    expect(words({ type: 'engine_error', code: 'ENGINE_TIMEOUT' }, 'review')).toBe(
      'the engine failed (ENGINE_TIMEOUT), so the fallback action review was taken',
    );
  });

  it('counts policies from 1 and names their action', () => {
    expect(words({ type: 'policy', rule: 0 }, 'block')).toBe('policy 1 matched, so the action is block');
  });

  it('has no words for a reason it does not know or that is malformed', () => {
    expect(words({ type: 'new_kind' }, 'continue')).toBeNull();
    expect(words({ type: 'policy' }, 'continue')).toBeNull();
    expect(words({ type: 'low_confidence', question: 'q' }, 'continue')).toBeNull();
    expect(words(null, 'continue')).toBeNull();
    expect(words('default', 'continue')).toBeNull();
  });
});
