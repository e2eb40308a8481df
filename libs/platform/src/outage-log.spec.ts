import { OutageLog } from './outage-log';

function recordingLogger() {
  const lines: Array<{ level: string; context: Record<string, unknown>; message: string }> = [];
  const logger = {
    warn: (context: Record<string, unknown>, message: string) => lines.push({ level: 'warn', context, message }),
    info: (context: Record<string, unknown>, message: string) => lines.push({ level: 'info', context, message }),
  };
  return { lines, logger: logger as unknown as ConstructorParameters<typeof OutageLog>[0] };
}

describe('OutageLog', () => {
  it('says once that the dependency went and once that it came back, however often either is noticed', () => {
    const { lines, logger } = recordingLogger();
    const outage = new OutageLog(logger, { lost: 'Redis is away', restored: 'Redis is back' });
    outage.restored();
    outage.lost('connection refused');
    outage.lost('timeout');
    outage.restored();
    outage.restored();
    outage.lost('reset');
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'Redis is away'],
      ['info', 'Redis is back'],
      ['warn', 'Redis is away'],
    ]);
    expect(lines[0]!.context).toEqual({ reason: 'connection refused' });
    expect(typeof lines[1]!.context.afterMs).toBe('number');
  });
});
