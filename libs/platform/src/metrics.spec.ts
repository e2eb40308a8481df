import { Metrics } from './metrics';

describe('gauges read when scraped', () => {
  it('reads the current value at each scrape, and adds up several readers of one name', async () => {
    const metrics = new Metrics('decision-runner');
    let first = 0;
    metrics.gauge('decision_service_test_in_flight', 'test', [], () => [[{}, first]]);
    expect(await metrics.registry.getSingleMetricAsString('decision_service_test_in_flight')).toMatch(
      /^decision_service_test_in_flight\{service="decision-runner"\} 0$/m,
    );
    first = 3;
    metrics.gauge('decision_service_test_in_flight', 'test', [], async () => [[{}, 2]]);
    expect(await metrics.registry.getSingleMetricAsString('decision_service_test_in_flight')).toMatch(
      /^decision_service_test_in_flight\{service="decision-runner"\} 5$/m,
    );
  });

  it('forgets label sets a reader no longer answers', async () => {
    const metrics = new Metrics('delivery');
    let streams: Array<[{ stream: string }, number]> = [
      [{ stream: 'A' }, 1],
      [{ stream: 'B' }, 2],
    ];
    metrics.gauge('decision_service_test_backlog', 'test', ['stream'], () => streams);
    expect(await metrics.registry.getSingleMetricAsString('decision_service_test_backlog')).toContain('stream="B"');
    streams = [[{ stream: 'A' }, 4]];
    const text = await metrics.registry.getSingleMetricAsString('decision_service_test_backlog');
    expect(text).toMatch(/^decision_service_test_backlog\{stream="A",service="delivery"\} 4$/m);
    expect(text).not.toContain('stream="B"');
  });
});
