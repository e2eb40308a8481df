import { defineTemplate } from './template';

export const contentModeration = defineTemplate({
  id: 'content-moderation',
  name: 'Content moderation',
  description:
    'Moderates a user post before it goes live: classifies the kind of violation, grades its severity, and never lets content endangering minors through.',
  category: 'trust-and-safety',
  patterns: ['classification', 'gating', 'human-review'],
  schema: {
    state: { type: 'text' },
    context:
      'Community guidelines of a hobbyist marketplace and forum. Criticism of products and sellers is allowed; attacks on people, spam and illegal goods are not. Posts may be in any language.',
    questions: [
      {
        key: 'category',
        kind: 'choice',
        instructions: 'Which guideline does the post break, if any? Pick the most serious one.',
        options: [
          { value: 'safe', description: 'Breaks no guideline' },
          { value: 'spam', description: 'Advertising, scams, repeated or off-topic promotion' },
          { value: 'harassment', description: 'Attacks, threats or insults aimed at a person' },
          { value: 'hate', description: 'Demeans people for a protected characteristic' },
          { value: 'sexual', description: 'Sexual content' },
          { value: 'violence', description: 'Graphic violence or incitement' },
          { value: 'illegal_goods', description: 'Offers weapons, drugs or stolen goods' },
          { value: 'self_harm', description: 'Encourages or describes self-harm' },
        ],
        minConfidence: 0.6,
      },
      {
        key: 'severity',
        kind: 'score',
        instructions: 'How harmful would the post be if published?',
        levels: [
          { label: 'none', description: 'Harmless' },
          { label: 'mild', description: 'Rude or low quality, but no one is hurt' },
          { label: 'moderate', description: 'Hurts someone or misleads buyers' },
          { label: 'severe', description: 'Dangerous, illegal or targeted abuse' },
        ],
      },
      {
        key: 'minor_safety',
        kind: 'probability',
        instructions: 'Judge the post only for the safety of minors.',
        criterion: 'The post sexualizes, endangers or solicits minors.',
        threshold: 0.2,
      },
    ],
    composites: [
      {
        key: 'harm',
        description: 'Expected harm if published',
        terms: [
          { question: 'severity', weight: 2 },
          { question: 'minor_safety', weight: 3 },
          { question: 'category', option: 'safe', weight: -1 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'minor_safety', op: 'gte', value: 0.2 }, action: 'block' },
      {
        when: { on: 'answer', question: 'severity', op: 'eq', value: 'severe' },
        and: [{ on: 'answer', question: 'category', op: 'neq', value: 'safe' }],
        action: 'block',
      },
      { when: { on: 'answer', question: 'category', op: 'eq', value: 'spam' }, action: 'block' },
      { when: { on: 'composite', composite: 'harm', op: 'gte', value: 0.4 }, action: 'escalate' },
      { when: { on: 'score', question: 'severity', op: 'gte', value: 2.5 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 4000, onEngineError: 'fallback' },
    destinations: [
      {
        key: 'moderator_queue',
        type: 'webhook',
        description: 'Sends held posts to the moderators',
        url: 'https://hooks.example.com/moderation/held',
        when: [{ on: 'action', op: 'neq', value: 'continue' }],
      },
    ],
  },
  sample_state:
    'Selling my old road bike, 54cm frame, new tyres. DM me. Also, the guy who outbid me last week is a clueless idiot and everyone should avoid him.',
});
