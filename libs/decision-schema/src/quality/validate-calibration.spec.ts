import { fullSchema, normalized } from '../__fixtures__/schemas';
import { validateSchema } from '../validate-schema';

const issuesOf = (calibration: unknown) => {
  const result = validateSchema({ ...fullSchema(), calibration });
  return result.valid ? [] : result.issues;
};

describe('the calibration block', () => {
  it('is optional and absent from a normalized schema without maps', () => {
    expect(normalized(fullSchema())).not.toHaveProperty('calibration');
    expect(normalized({ ...fullSchema(), calibration: null })).not.toHaveProperty('calibration');
    expect(normalized({ ...fullSchema(), calibration: { model: {} } })).not.toHaveProperty('calibration');
  });

  it('keeps valid maps per source and question, and validates again unchanged', () => {
    const calibration = {
      model: { intent: { method: 'temperature', temperature: 2.5 }, fraud: { method: 'platt', a: 0.4, b: -0.2 } },
      tokens: {
        urgency: {
          method: 'isotonic',
          points: [
            [0.3, 0.2],
            [0.9, 0.6],
          ],
        },
        fraud: { method: 'isotonic', points: [[0.5, 0.5]] },
      },
    };
    const schema = normalized({ ...fullSchema(), calibration });
    expect(schema.calibration).toEqual(calibration);
    expect(normalized(schema)).toEqual(schema);
  });

  it.each([
    [[], 'calibration', 'must be an object'],
    [{ logits: {} }, 'calibration.logits', 'unknown property'],
    [{ model: [] }, 'calibration.model', 'must be an object'],
    [{ model: { nope: { method: 'temperature', temperature: 2 } } }, 'calibration.model.nope', 'is not a question of this decision'],
    [{ model: { intent: { method: 'platt', a: 1, b: 0 } } }, 'calibration.model.intent.method', 'must be one of temperature, isotonic'],
    [{ model: { fraud: { method: 'temperature', temperature: 2 } } }, 'calibration.model.fraud.method', 'must be one of platt, isotonic'],
    [{ model: { intent: { method: 'temperature', temperature: 0 } } }, 'calibration.model.intent.temperature', 'must be between 0.01 and 100'],
    [{ model: { intent: { method: 'temperature' } } }, 'calibration.model.intent.temperature', 'must be a number'],
    [{ model: { intent: { method: 'temperature', temperature: 2, a: 1 } } }, 'calibration.model.intent.a', 'is not a property of a temperature map'],
    [{ model: { fraud: { method: 'platt', a: -1, b: 0 } } }, 'calibration.model.fraud.a', 'must be between 0 and 1,000'],
    [{ model: { intent: { method: 'isotonic', points: [] } } }, 'calibration.model.intent.points', 'must have 1 to 50 points (has 0)'],
    [
      { model: { intent: { method: 'isotonic', points: [[0.5]] } } },
      'calibration.model.intent.points.0',
      'must be a pair [probability, calibrated probability] of numbers from 0 to 1',
    ],
    [
      { model: { intent: { method: 'isotonic', points: [[0.5, 1.2]] } } },
      'calibration.model.intent.points.0',
      'must be a pair [probability, calibrated probability] of numbers from 0 to 1',
    ],
    [
      {
        model: {
          intent: {
            method: 'isotonic',
            points: [
              [0.5, 0.5],
              [0.6, 0.4],
            ],
          },
        },
      },
      'calibration.model.intent.points.1',
      'must not be below the point before it: the map must be non-decreasing',
    ],
    [
      {
        model: {
          intent: {
            method: 'isotonic',
            points: [
              [0.5, 0.5],
              [0.4, 0.6],
            ],
          },
        },
      },
      'calibration.model.intent.points.1',
      'must not be below the point before it: the map must be non-decreasing',
    ],
    [{ model: { intent: 'hot' } }, 'calibration.model.intent', 'must be an object'],
  ])('refuses %j at %s', (calibration, path, message) => {
    expect(issuesOf(calibration)).toContainEqual({ path, message });
  });

  it('refuses more than 50 isotonic points', () => {
    const points = Array.from({ length: 51 }, (_, i) => [i / 51, i / 51]);
    expect(issuesOf({ model: { intent: { method: 'isotonic', points } } }).map((issue) => issue.path)).toEqual(['calibration.model.intent.points']);
  });

  it('takes maps of the token source too', () => {
    expect(issuesOf({ tokens: { intent: { method: 'temperature', temperature: 1 } } })).toEqual([]);
  });
});
