import { defineTemplate } from './template';

export const kycReview = defineTemplate({
  id: 'kyc-review',
  name: 'KYC onboarding review',
  description:
    'Reviews a customer onboarding file: whether the identity document is consistent with the application, whether screening hits are real matches, and what is missing. Blocks confirmed sanctions matches, sends doubts to compliance.',
  category: 'compliance',
  patterns: ['approval', 'human-review', 'gating'],
  schema: {
    state: {
      type: 'object',
      fields: {
        full_name: { type: 'string', required: true },
        date_of_birth: { type: 'string', description: 'ISO 8601 date', required: true },
        country: { type: 'string', description: 'Country of residence', required: true },
        document_type: { type: 'string', enum: ['passport', 'national_id', 'drivers_license'], required: true },
        document_text: { type: 'string', description: 'OCR text of the identity document', required: true },
        selfie_match_score: { type: 'number', description: 'Face match between selfie and document, 0 to 1' },
        address: { type: 'object' },
        screening_hits: { type: 'array', description: 'Sanctions and PEP list entries returned by the screening provider' },
      },
    },
    context: 'Regulated payment institution in the EU. Compliance must review every possible sanctions or PEP match; confirmed sanctions matches are refused.',
    questions: [
      {
        key: 'document_consistency',
        kind: 'score',
        instructions: 'Compare `document_text` with `full_name`, `date_of_birth`, `country` and `document_type`.',
        levels: [
          { label: 'inconsistent', description: 'Name, birth date or document type do not match' },
          { label: 'minor_discrepancies', description: 'Transliteration, abbreviations or OCR noise only' },
          { label: 'consistent', description: 'Everything matches' },
        ],
        minConfidence: 0.5,
      },
      {
        key: 'screening',
        kind: 'choice',
        instructions: 'Do the `screening_hits` refer to this person? Consider name, birth date and nationality of each hit.',
        options: [
          { value: 'no_match', description: 'No hits, or hits that clearly refer to someone else' },
          { value: 'possible_match', description: 'A hit that may be this person' },
          { value: 'confirmed_match', description: 'A hit that is this person' },
        ],
        minConfidence: 0.7,
      },
      {
        key: 'identity_risk',
        kind: 'probability',
        instructions: 'Weigh `selfie_match_score`, `document_text` and `address`.',
        criterion: 'The applicant is not who they claim to be, or the document is forged or altered.',
        threshold: 0.5,
      },
      {
        key: 'missing_information',
        kind: 'probability',
        instructions: 'Check whether the file has everything needed for a decision, including `address`.',
        criterion: 'The file lacks information that compliance needs to decide.',
      },
    ],
    composites: [
      {
        key: 'review_need',
        description: 'How much the file needs a compliance officer',
        terms: [
          { question: 'identity_risk', weight: 3 },
          { question: 'document_consistency', weight: -2 },
          { question: 'missing_information', weight: 1 },
          { question: 'screening', option: 'possible_match', weight: 2 },
        ],
      },
    ],
    policies: [
      { when: { on: 'answer', question: 'screening', op: 'eq', value: 'confirmed_match' }, action: 'block' },
      { when: { on: 'answer', question: 'screening', op: 'eq', value: 'possible_match' }, action: 'escalate' },
      { when: { on: 'answer', question: 'identity_risk', op: 'gte', value: 0.6 }, action: 'escalate' },
      { when: { on: 'answer', question: 'document_consistency', op: 'eq', value: 'inconsistent' }, action: 'escalate' },
      { when: { on: 'composite', composite: 'review_need', op: 'gt', value: 0.1 }, action: 'escalate' },
    ],
    fallbackAction: 'escalate',
    settings: { timeoutMs: 10000, onEngineError: 'error', storeInput: false, storeOutput: true },
    destinations: [
      {
        key: 'compliance_case',
        type: 'workflow',
        description: 'Starts the compliance review workflow',
        url: 'https://workflows.example.com/hooks/kyc-review',
        when: [{ on: 'action', op: 'neq', value: 'continue' }],
      },
    ],
  },
  sample_state: {
    full_name: 'Joana Maria Ferreira',
    date_of_birth: '1988-04-17',
    country: 'PT',
    document_type: 'national_id',
    document_text: 'REPUBLICA PORTUGUESA CARTAO DE CIDADAO FERREIRA JOANA MARIA 17 04 1988 PRT',
    selfie_match_score: 0.93,
    address: { street: 'Rua das Flores 12', city: 'Porto', postal_code: '4050-262' },
    screening_hits: [],
  },
});
