/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Request extends RequestParams {
    setupRequest?: (request: RequestParams) => RequestParams;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests to send in all, instead of a duration. */
    amount?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    p99_9: number;
    max: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    '2xx': number;
  }
  /** The running load: a promise of the result that also reports every answer as it comes. */
  interface Instance extends Promise<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): Instance;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
