import type { SessionSummary } from '../audience-sessions/index.js';
import { consoleAssets } from './console.static.js';
import { renderDocument, type Section, TableRegion, type Viewer } from './console.views.js';
import type { VNode } from 'preact';

/** The analytics, people and settings screens: the shell with their own stylesheet (and the chart's assets). */
export function renderInsight(options: {
  title: string;
  viewer: Viewer;
  section: Section;
  body: VNode;
  chart?: boolean;
}): string {
  const { insights } = consoleAssets();
  return renderDocument({
    title: options.title,
    viewer: options.viewer,
    section: options.section,
    body: options.body,
    extra: options.chart
      ? { styles: [insights.uplotCss.path, insights.css.path], scripts: [insights.uplot.path, insights.chart.path] }
      : { styles: [insights.css.path] },
  });
}

/** Seconds as people read them: "1 min 05 s", "42 s", with the exact value kept in data-value. */
export function duration(seconds: number): string {
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  return `${minutes} min ${String(whole % 60).padStart(2, '0')} s`;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`;
}

export interface AnalyticsOptions {
  viewer: Viewer;
  page: { pageId: string; name: string };
  audiences: { audienceId: string; name: string }[];
  from: string;
  to: string;
  audienceId: string | null;
  summary: SessionSummary;
}

/** One number of the summary: its label, as shown, and its exact value (data-value, for tests and tools). */
function Metric(props: { name: string; label: string; shown: string; value: number | null }) {
  return (
    <div>
      <dt>{props.label}</dt>
      <dd data-metric={props.name} data-value={props.value === null ? 'none' : String(props.value)}>
        {props.shown}
      </dd>
    </div>
  );
}

function CountTable(props: {
  label: string;
  heading: string;
  rows: { value: string; sessions: number }[];
  total: number;
}) {
  if (props.rows.length === 0) return <p>None in this range.</p>;
  return (
    <TableRegion label={props.label}>
      <table>
        <thead>
          <tr>
            <th scope="col">{props.heading}</th>
            <th scope="col" class="num">
              Visits
            </th>
            <th scope="col" class="num">
              Share
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.value}>
              <td>{r.value === '' ? <span class="hint">(none)</span> : r.value}</td>
              <td class="num">{r.sessions}</td>
              <td class="num">{percent(r.sessions, props.total)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}

/** A page's analytics over a date range, for the whole page or one audience (docs/console.md). */
export function renderAnalytics(options: AnalyticsOptions): string {
  const { page, summary: s, audiences } = options;
  const names = new Map(audiences.map((a) => [a.audienceId, a.name]));
  const audienceName = options.audienceId === null ? null : (names.get(options.audienceId) ?? options.audienceId);
  return renderInsight({
    title: `Analytics · ${page.name}`,
    viewer: options.viewer,
    section: 'pages',
    chart: true,
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a> › <a href={`/console/pages/${page.pageId}`}>{page.name}</a>
        </nav>
        <h1>Analytics: {page.name}</h1>
        <p class="lead">
          {audienceName === null ? 'All audiences' : `Audience: ${audienceName}`}, {options.from} to {options.to} (UTC
          days, both included).
        </p>
        <form method="get" action={`/console/pages/${page.pageId}/analytics`} class="range">
          <div>
            <label for="range-from">From</label>
            <input id="range-from" type="date" name="from" value={options.from} required />
          </div>
          <div>
            <label for="range-to">To</label>
            <input id="range-to" type="date" name="to" value={options.to} required />
          </div>
          <div>
            <label for="range-audience">Audience</label>
            <select id="range-audience" name="audience">
              <option value="">All audiences</option>
              {audiences.map((a) => (
                <option key={a.audienceId} value={a.audienceId} selected={a.audienceId === options.audienceId}>
                  {a.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <button type="submit">Show</button>
          </div>
        </form>
        {s.truncated && (
          <p class="notice error" role="status">
            This range holds more visits than one screen sums up: the numbers cover the newest {s.sessions}. Choose a
            shorter range.
          </p>
        )}
        <dl class="metrics" aria-label="Summary">
          <Metric name="sessions" label="Visits" shown={String(s.sessions)} value={s.sessions} />
          <Metric
            name="medianEngagedSeconds"
            label="Median engaged time"
            shown={s.medianEngagedSeconds === null ? '—' : duration(s.medianEngagedSeconds)}
            value={s.medianEngagedSeconds}
          />
          <Metric name="bounceRate" label="Bounce rate" shown={percent(s.bounces, s.sessions)} value={s.bounceRate} />
          <Metric name="conversions" label="Conversions" shown={String(s.conversions)} value={s.conversions} />
          <Metric
            name="formSubmissions"
            label="Form submissions"
            shown={String(s.formSubmissions)}
            value={s.formSubmissions}
          />
          <Metric
            name="questionsAsked"
            label="Questions to the agent"
            shown={String(s.questionsAsked)}
            value={s.questionsAsked}
          />
        </dl>
        <figure
          class="chart"
          data-chart="visits"
          data-days={JSON.stringify(s.visitsPerDay.map((d) => d.day))}
          data-values={JSON.stringify(s.visitsPerDay.map((d) => d.sessions))}
        >
          <figcaption id="visits-caption">Visits per day</figcaption>
          <div class="chart-slot" aria-hidden="true">
            The chart needs script; the table below has the same numbers.
          </div>
          <details>
            <summary>Visits per day as a table</summary>
            <TableRegion label="Visits per day">
              <table data-table="visitsPerDay">
                <thead>
                  <tr>
                    <th scope="col">Day (UTC)</th>
                    <th scope="col" class="num">
                      Visits
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {s.visitsPerDay.map((d) => (
                    <tr key={d.day}>
                      <td>{d.day}</td>
                      <td class="num">{d.sessions}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          </details>
        </figure>
        <div class="grid-2">
          <section>
            <h2>Scroll depth</h2>
            <TableRegion label="Scroll depth">
              <table data-table="scrollDepth">
                <thead>
                  <tr>
                    <th scope="col">Deepest scroll</th>
                    <th scope="col" class="num">
                      Visits
                    </th>
                    <th scope="col" class="num">
                      Share
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {s.scrollDepth.map((b) => (
                    <tr key={b.from}>
                      <td>{b.from === b.to ? `${b.from} %` : `${b.from}–${b.to} %`}</td>
                      <td class="num">{b.sessions}</td>
                      <td class="num">{percent(b.sessions, s.sessions)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          </section>
          <section>
            <h2>By audience</h2>
            {s.byAudience.length === 0 ? (
              <p>No visits in this range.</p>
            ) : (
              <TableRegion label="Visits by audience">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Audience</th>
                      <th scope="col" class="num">
                        Visits
                      </th>
                      <th scope="col" class="num">
                        Conv.
                      </th>
                      <th scope="col" class="num">
                        Forms
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.byAudience.map((a) => (
                      <tr key={a.audienceId}>
                        <td>
                          <a
                            href={`/console/pages/${page.pageId}/analytics?${new URLSearchParams({ from: options.from, to: options.to, audience: a.audienceId }).toString()}`}
                          >
                            {names.get(a.audienceId) ?? a.audienceId}
                          </a>
                        </td>
                        <td class="num">{a.sessions}</td>
                        <td class="num">{a.conversions}</td>
                        <td class="num">{a.formSubmissions}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableRegion>
            )}
          </section>
          <section>
            <h2>Top UTM sources</h2>
            <CountTable label="Top UTM sources" heading="Source" rows={s.utmSources} total={s.sessions} />
          </section>
          <section>
            <h2>Top UTM campaigns</h2>
            <CountTable label="Top UTM campaigns" heading="Campaign" rows={s.utmCampaigns} total={s.sessions} />
          </section>
        </div>
      </>
    ),
  });
}
