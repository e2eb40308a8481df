import { TEMPLATES } from '@ds/decision-schema';
import { demoDecisionRepair, isDemoWorkspaceName } from './demo-repair';

const template = TEMPLATES.find((candidate) => candidate.id === 'support-triage')!;
const schema = template.schema as { state: { fields: Record<string, unknown> } };
const deployed = { revision: 3, active_version: 2, endpoint_enabled: true, active_schema: template.schema };

describe('demoDecisionRepair', () => {
  it('leaves a deployed, enabled decision that runs the sample alone', () => {
    expect(demoDecisionRepair(deployed, template)).toEqual({ redeployTemplate: false, enableEndpoint: false });
  });

  it('keeps a version edited by hand while it still accepts the sample state', () => {
    const edited = {
      ...schema,
      context: 'Edited in the application',
      state: { ...schema.state, fields: { ...schema.state.fields, locale: { type: 'string' } } },
    };
    expect(demoDecisionRepair({ ...deployed, active_schema: edited }, template)).toEqual({ redeployTemplate: false, enableEndpoint: false });
  });

  it('deploys the template again when the active version refuses the sample state', () => {
    const stricter = { ...schema, state: { ...schema.state, fields: { ...schema.state.fields, order_id: { type: 'string', required: true } } } };
    expect(demoDecisionRepair({ ...deployed, active_schema: stricter }, template).redeployTemplate).toBe(true);
  });

  it('deploys the template when nothing is deployed, or the active schema is not a schema', () => {
    expect(demoDecisionRepair({ ...deployed, active_version: null, active_schema: null }, template).redeployTemplate).toBe(true);
    expect(demoDecisionRepair({ ...deployed, active_schema: { questions: 'no' } }, template).redeployTemplate).toBe(true);
  });

  it('turns a disabled endpoint back on, and only that', () => {
    expect(demoDecisionRepair({ ...deployed, endpoint_enabled: false }, template)).toEqual({ redeployTemplate: false, enableEndpoint: true });
  });
});

describe('isDemoWorkspaceName', () => {
  it.each(['Demo', 'Demo 2026-11-20T08:00:00.000Z'])('knows %s', (name) => expect(isDemoWorkspaceName(name)).toBe(true));
  it.each(['Demo shop', 'demo', 'My Demo 2026-11-20T08:00:00.000Z', 'Acme'])('leaves %s alone', (name) => expect(isDemoWorkspaceName(name)).toBe(false));
});
