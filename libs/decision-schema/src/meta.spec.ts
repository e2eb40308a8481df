import { text } from './__fixtures__/schemas';
import { checkDecisionMeta, isValidSlug } from './meta';

describe('isValidSlug', () => {
  it.each([
    ['a', true],
    ['support-triage', true],
    ['v2-refunds-eu', true],
    ['123', true],
    [text(64), true],
    [text(65), false],
    ['', false],
    ['-leading', false],
    ['trailing-', false],
    ['double--dash', false],
    ['Upper', false],
    ['under_score', false],
    ['with space', false],
    ['ação', false],
    [null, false],
    [42, false],
  ])('%p → %p', (slug, valid) => {
    expect(isValidSlug(slug)).toBe(valid);
  });
});

describe('checkDecisionMeta', () => {
  const valid = { name: 'Refunds', description: 'Approves refunds', slug: 'refunds' };

  it('accepts a valid name, description and slug; the description is optional', () => {
    expect(checkDecisionMeta(valid)).toEqual([]);
    expect(checkDecisionMeta({ ...valid, description: undefined })).toEqual([]);
    expect(checkDecisionMeta({ ...valid, description: null })).toEqual([]);
  });

  it.each([
    [{ name: text(1) }, []],
    [{ name: text(80) }, []],
    [{ name: text(81) }, [{ path: 'name', message: 'must be 1 to 80 characters (is 81)' }]],
    [{ name: '' }, [{ path: 'name', message: 'must not be empty' }]],
    [{ name: '   ' }, [{ path: 'name', message: 'must not be blank' }]],
    [{ name: undefined }, [{ path: 'name', message: 'is required' }]],
    [{ name: 5 }, [{ path: 'name', message: 'must be a string' }]],
    [{ description: text(500) }, []],
    [{ description: text(501) }, [{ path: 'description', message: 'must be at most 500 characters (is 501)' }]],
    [{ description: '' }, []],
    [{ slug: undefined }, [{ path: 'slug', message: 'is required' }]],
    [{ slug: 'Bad Slug' }, [{ path: 'slug', message: 'must be up to 64 lowercase letters, digits and single dashes, not starting or ending with a dash' }]],
  ])('%p', (change, expected) => {
    expect(checkDecisionMeta({ ...valid, ...change })).toEqual(expected);
  });

  it('reports every issue at once', () => {
    expect(checkDecisionMeta({}).map((issue) => issue.path)).toEqual(['name', 'slug']);
    expect(checkDecisionMeta({ name: '', description: 1, slug: '-' }).map((issue) => issue.path)).toEqual(['name', 'description', 'slug']);
  });
});
