import {
  fillSecrets,
  fillSecretsFrom,
  headerSecretNames,
  mentionsSecrets,
  referencedSecrets,
  secretsNotSet,
  withoutSecretReferences,
} from './secret-references';
import { issuesOf, minimalSchema } from './__fixtures__/schemas';

describe('secret references', () => {
  it('finds each name once, in order of first use, with spaces inside the braces allowed', () => {
    expect(referencedSecrets('Bearer {{secrets.CRM_TOKEN}} {{ secrets.OTHER }} {{secrets.CRM_TOKEN}}')).toEqual(['CRM_TOKEN', 'OTHER']);
    expect(referencedSecrets('{{params.name}} and no secret')).toEqual([]);
    expect(referencedSecrets('{{secrets.}}')).toEqual(['']);
    expect(headerSecretNames({ authorization: 'Bearer {{secrets.A}}', 'x-key': '{{secrets.B}}:{{secrets.A}}', plain: 'x' })).toEqual(['A', 'B']);
  });

  it('tells a malformed attempt from plain text', () => {
    expect(mentionsSecrets('{{ secrets.A B }}')).toBe(true);
    expect(mentionsSecrets(withoutSecretReferences('{{secrets.A}}'))).toBe(false);
    expect(mentionsSecrets(withoutSecretReferences('{{secrets.A}} {{secrets.B C}}'))).toBe(true);
    expect(mentionsSecrets('secrets.A without braces')).toBe(false);
  });

  it('fills every reference, leaves other headers as they are, and names the missing ones', () => {
    expect(fillSecrets({ authorization: 'Bearer {{secrets.T}}', pair: '{{secrets.T}}/{{ secrets.U }}', plain: 'as is' }, { T: 't0k', U: 'u' })).toEqual({
      headers: { authorization: 'Bearer t0k', pair: 't0k/u', plain: 'as is' },
    });
    expect(fillSecrets({ a: '{{secrets.X}}', b: '{{secrets.Y}} {{secrets.T}}' }, { T: 't' })).toEqual({ missing: ['X', 'Y'] });
    expect(fillSecrets({}, {})).toEqual({ headers: {} });
  });

  it('inserts a value literally, even one that looks like a replacement pattern', () => {
    expect(fillSecrets({ a: '{{secrets.T}}' }, { T: "$& $1 $$ $'" })).toEqual({ headers: { a: "$& $1 $$ $'" } });
  });

  it('never takes an inherited property for a secret', () => {
    expect(fillSecrets({ a: '{{secrets.constructor}}' }, {})).toEqual({ missing: ['constructor'] });
  });
});

describe('fillSecretsFrom', () => {
  it('asks only for the names referred to, and never when no header refers to one', async () => {
    const asked: string[][] = [];
    const lookup = async (names: string[]) => {
      asked.push(names);
      return { T: 't0k' };
    };
    expect(await fillSecretsFrom({ plain: 'x' }, lookup)).toEqual({ headers: { plain: 'x' } });
    expect(asked).toEqual([]);
    expect(await fillSecretsFrom({ a: 'Bearer {{secrets.T}}', b: '{{secrets.U}}' }, lookup)).toEqual({ missing: ['U'] });
    expect(await fillSecretsFrom({ a: 'Bearer {{secrets.T}}' }, lookup)).toEqual({ headers: { a: 'Bearer t0k' } });
    expect(asked).toEqual([['T', 'U'], ['T']]);
  });

  it('lets a failed lookup reject', async () => {
    await expect(fillSecretsFrom({ a: '{{secrets.T}}' }, () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  });

  it('says which secrets are not set, in one clause', () => {
    expect(secretsNotSet(['A'])).toBe('the secret A is not set in this workspace.');
    expect(secretsNotSet(['A', 'B'])).toBe('the secrets A, B are not set in this workspace.');
  });
});

describe('secret references in a schema', () => {
  const withDestination = (destination: Record<string, unknown>) => ({ ...(minimalSchema() as object), destinations: [{ key: 'out', ...destination }] });
  const problems = (schema: unknown) => issuesOf(schema).map((issue) => `${issue.path}: ${issue.message}`);

  it('accepts well-formed references in header values', () => {
    expect(problems(withDestination({ type: 'webhook', url: 'https://example.com/h', headers: { Authorization: 'Bearer {{secrets.CRM_TOKEN}}' } }))).toEqual(
      [],
    );
  });

  it('refuses a malformed name and a malformed reference in a header', () => {
    expect(problems(withDestination({ type: 'webhook', url: 'https://example.com/h', headers: { a: '{{secrets.crm}}', b: '{{ secrets.A B }}' } }))).toEqual([
      expect.stringMatching(/headers\.a.*\{\{secrets\.crm\}\} is not a secret name/),
      expect.stringMatching(/headers\.b.*referred to as \{\{secrets\.NAME\}\}/),
    ]);
  });

  it('refuses references outside header values', () => {
    const issues = problems(withDestination({ type: 'http', url: 'https://example.com/{{secrets.PATH}}', method: 'POST', body: 'token={{secrets.T}}' }));
    expect(issues).toEqual([expect.stringMatching(/\.body.*header values only/), expect.stringMatching(/\.url.*header values only/)]);
  });
});
