// Browser tests of the dashboard: node run.mjs BASE_URL
//
// Expects the demo database (`quiescent demo`) plus one build labelled
// `<script>alert(1)</script>` (run.sh stores it). Drives Debian's /usr/bin/chromium through
// playwright-core, with and without JavaScript, and saves screenshots under out/.

import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const base = (process.argv[2] || process.env.QUIESCENT_URL || "").replace(/\/$/, "");
if (!/^https?:\/\//.test(base)) {
  console.error("usage: node run.mjs http://127.0.0.1:PORT");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "out");
mkdirSync(out, { recursive: true });

const XSS = "<script>alert(1)</script>";
const RIG = "<b>rig</b>";
// `quiescent compare --json` of the seed 000 builds, written by run.sh: what the page must show.
const seedJson = process.env.QUIESCENT_SEED000_JSON;
const LIVE = "/compare?base=c229828ca6bc-reverted&head=c229828ca6bc";
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const args = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const profiles = [];
async function browser(javaScriptEnabled) {
  const dir = mkdtempSync(join(tmpdir(), "quiescent-chromium-"));
  profiles.push(dir);
  return chromium.launchPersistentContext(dir, {
    executablePath,
    headless: true,
    args,
    javaScriptEnabled,
    viewport: { width: 1280, height: 900 },
  });
}

let passed = 0;
let failed = 0;
async function test(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${String(e && e.stack ? e.stack : e).split("\n").slice(0, 4).join("\n     ")}`);
  }
}
function check(cond, msg) {
  if (!cond) throw new Error(msg);
}
/** `got` within a relative tolerance `rel` (or an absolute `abs`) of `want`. */
function near(got, want, rel, msg, abs = 0) {
  const ok = Number.isFinite(got) && (Math.abs(got - want) <= abs || Math.abs(got - want) <= rel * Math.abs(want));
  check(ok, msg);
}
/** A duration as the page prints it ("35.687 s", "892 ms", "12 µs") in seconds. */
function seconds(text) {
  const m = text.match(/^([-+0-9.e]+)\s*(s|ms|µs|us|ns)$/);
  if (!m) return NaN;
  return parseFloat(m[1]) * { s: 1, ms: 1e-3, "µs": 1e-6, us: 1e-6, ns: 1e-9 }[m[2]];
}

/** Visible rows of the results table: their data-verdict. */
async function visibleVerdicts(page) {
  return page.$$eval("#results tbody tr", (rows) =>
    rows.filter((r) => r.offsetParent !== null).map((r) => r.dataset.verdict),
  );
}

/** The results table as text (what a reader sees). */
async function tableText(page) {
  return page.$eval("#results", (t) => t.innerText);
}

const js = await browser(true);
const nojs = await browser(false);
const dialogs = [];
// Script errors and failed loads are recorded on every page either browser opens.
const errors = [];
for (const ctx of [js, nojs]) {
  ctx.on("page", (p) => {
    p.on("dialog", (d) => { dialogs.push(d.message()); d.dismiss(); });
    p.on("pageerror", (e) => errors.push(`${p.url()}: ${e}`));
    p.on("console", (m) => {
      if (m.type() === "error" && /Content.Security.Policy/i.test(m.text())) errors.push(`${p.url()}: ${m.text()}`);
    });
    // A resource the page needs that fails to load (the page itself may be a deliberate 404).
    p.on("response", (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== "document") errors.push(`${p.url()}: ${r.status()} ${r.url()}`);
    });
  });
}
const page = await js.newPage();

try {
  await test("home page lists builds and offers the comparison form", async () => {
    const res = await page.goto(base + "/");
    check(res.status() === 200, `status ${res.status()}`);
    check((await page.title()).includes("quiescent"), "title");
    check(await page.locator("form.compare-form select[name=base]").count() === 1, "no base select");
    check(await page.locator("a", { hasText: "c229828ca6bc-reverted" }).count() >= 1, "demo build not listed");
  });

  await test("the demo comparison shows its table and SVG charts", async () => {
    const res = await page.goto(base + LIVE);
    check(res.status() === 200, `status ${res.status()}`);
    const rows = await page.locator("#results tbody tr").count();
    check(rows >= 3, `only ${rows} rows`);
    const charts = await page.locator("svg.chart.strip").count();
    const ecdfs = await page.locator("svg.chart.ecdf").count();
    check(charts >= 1 && ecdfs >= 1, `charts ${charts}, ecdf ${ecdfs}`);
    const dots = await page.$$eval("svg.chart path.dots", (ps) =>
      ps.reduce((n, p) => n + (p.getAttribute("d").match(/h0/g) || []).length, 0));
    check(dots >= 6, `only ${dots} dots`);
    // Charts have a real size on screen.
    const box = await page.locator("svg.chart.strip").first().boundingBox();
    check(box && box.width > 300 && box.height > 60, `chart box ${JSON.stringify(box)}`);
    check(await page.locator("h2", { hasText: "Parameter sweeps" }).count() === 1, "no sweep matrix");
    check(await page.locator("#email-text").innerText().then((t) => t.startsWith("base: c229828ca6bc-reverted")), "email text");
    check(await page.locator("button.copy[data-copy=email-text]").isVisible(), "copy button hidden with JS");
    await page.screenshot({ path: join(out, "compare.png"), fullPage: true });
  });

  await test("filters work live with JavaScript and keep the address bookmarkable", async () => {
    await page.goto(base + LIVE);
    const all = await visibleVerdicts(page);
    await page.selectOption("#f-only", "changes");
    const changes = await visibleVerdicts(page);
    check(changes.length > 0 && changes.length < all.length, `changes ${changes.length} of ${all.length}`);
    check(changes.every((v) => ["regression", "improvement", "increase", "decrease"].includes(v)), `verdicts ${changes}`);
    check(page.url().includes("only=changes"), `url ${page.url()}`);
    await page.selectOption("#f-only", "");
    await page.fill("#f-q", "one-cpu");
    const searched = await page.$$eval("#results tbody tr", (rows) =>
      rows.filter((r) => r.offsetParent !== null).map((r) => r.dataset.search));
    check(searched.length > 0 && searched.every((s) => s.includes("one-cpu")), `search ${searched}`);
    check((await page.locator("#shown-count").innerText()).startsWith(`${searched.length} of`), "count not updated");
    check(page.url().includes("q=one-cpu"), `url ${page.url()}`);
    // The bookmarked address renders the same filter on the server.
    const again = await js.newPage();
    await again.goto(page.url());
    const server = await again.$$eval("#results tbody tr", (rows) =>
      rows.filter((r) => !r.hidden).map((r) => r.dataset.search));
    check(JSON.stringify(server) === JSON.stringify(searched), "server filter differs from live filter");
    await again.close();
  });

  await test("filters work without JavaScript (GET form)", async () => {
    const p = await nojs.newPage();
    await p.goto(base + LIVE);
    check(!(await p.locator("button.copy[data-copy=email-text]").isVisible()), "copy button shown without JS");
    const all = await visibleVerdicts(p);
    await p.selectOption("#f-only", "changes");
    await Promise.all([p.waitForNavigation(), p.click("#filters button[type=submit]")]);
    check(p.url().includes("only=changes"), `url ${p.url()}`);
    const changes = await visibleVerdicts(p);
    check(changes.length > 0 && changes.length < all.length, `changes ${changes.length} of ${all.length}`);
    check(changes.every((v) => ["regression", "improvement", "increase", "decrease"].includes(v)), `verdicts ${changes}`);
    await p.fill("#f-q", "all-cpus");
    await Promise.all([p.waitForNavigation(), p.click("#filters button[type=submit]")]);
    const rows = await p.$$eval("#results tbody tr", (r) => r.filter((x) => x.offsetParent !== null).map((x) => x.dataset.search));
    check(rows.every((s) => s.includes("all-cpus")), `search ${rows}`);
    await p.close();
  });

  await test("the seed 000 page shows the medians, change, p and verdict of compare --json", async () => {
    check(seedJson, "QUIESCENT_SEED000_JSON is not set (run.sh writes it)");
    const want = JSON.parse(readFileSync(seedJson, "utf8")).comparisons;
    check(want.length >= 6, `only ${want.length} comparisons in the JSON`);
    await page.goto(base + LIVE);
    const rows = await page.$$eval("#results tbody tr", (trs) => trs.map((tr) => ({
      verdict: tr.dataset.verdict,
      bench: tr.querySelector(".bench").innerText.trim(),
      params: (tr.querySelector(".params") || { innerText: "" }).innerText.trim(),
      name: tr.querySelector("td.series .mono:last-child").innerText.trim(),
      cells: [...tr.querySelectorAll("td.num")].map((td) => td.innerText.trim()),
    })));
    check(rows.length === want.length, `page has ${rows.length} rows, JSON ${want.length}`);
    for (const c of want) {
      const params = Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(" ");
      const row = rows.find((r) => r.bench === c.benchmark && r.params === params && r.name.startsWith(c.metric));
      const what = `${c.benchmark} ${params} ${c.metric}`;
      check(row, `no row for ${what}`);
      const [n, baseMed, headMed, change, p] = row.cells;
      check(n === `${c.base.n} / ${c.head.n}`, `${what}: n ${n}`);
      near(seconds(baseMed), c.base.median, 5e-4, `${what}: base median ${baseMed} vs ${c.base.median}`);
      near(seconds(headMed), c.head.median, 5e-4, `${what}: head median ${headMed} vs ${c.head.median}`);
      if (c.change_pct === null) check(change.startsWith("-") && !/\d/.test(change.split("\n")[0]), `${what}: change ${change} shown without one`);
      else near(parseFloat(change.split("\n")[0]), c.change_pct, 0, `${what}: change ${change} vs ${c.change_pct}`, 0.006);
      if (c.p === null) check(p === "-" || p === "", `${what}: p ${p} shown without a test`);
      else near(parseFloat(p), c.p, 0.05, `${what}: p ${p} vs ${c.p}`, 5e-5);
      check(row.verdict === c.verdict, `${what}: verdict ${row.verdict} vs ${c.verdict}`);
    }
  });

  await test("chart dots are visible with the stylesheet and not without it", async () => {
    // The dots are zero-length path segments: only a round cap and a stroke width make them show.
    const visible = (p) => p.$$eval("svg.chart path.dots", (ps) => ps.length > 0 && ps.every((d) => {
      const s = getComputedStyle(d);
      return s.strokeLinecap === "round" && parseFloat(s.strokeWidth) >= 2 && s.stroke !== "none"
        && parseFloat(s.strokeOpacity) > 0.2 && (d.getAttribute("d").match(/h0/g) || []).length > 0;
    }));
    await page.goto(base + LIVE);
    check(await visible(page), "dots not visible with the stylesheet");
    const bare = await js.newPage();
    await bare.route("**/*.css", (r) => r.abort());
    await bare.goto(base + LIVE);
    check(!(await visible(bare)), "dots look visible without the stylesheet: the check cannot fail");
    await bare.close();
    // The aborted stylesheet is this test's doing, not a page error.
  });

  await test("a machine named with markup shows as text", async () => {
    const res = await page.goto(base + "/machines/" + encodeURIComponent(RIG));
    check(res.status() === 200, `the machine ${RIG} is not stored (run.sh stores it): ${res.status()}`);
    check((await page.locator("h1").innerText()).includes(RIG), "machine name not shown as text");
    check(await page.locator("h1 b").count() === 0, "machine name rendered as markup");
    await page.goto(base + "/");
    check(await page.locator("a", { hasText: RIG }).count() >= 1, "machine not listed as text on the home page");
  });

  await test("a share link freezes the comparison and shows the same numbers", async () => {
    await page.goto(base + LIVE);
    const live = await tableText(page);
    await Promise.all([page.waitForNavigation(), page.click("form.share-form button")]);
    const m = new URL(page.url()).pathname.match(/^\/c\/([0-9A-Za-z]{8,})$/);
    check(m, `not a share link: ${page.url()}`);
    check(await page.locator(".banner", { hasText: "Shared comparison" }).count() === 1, "no banner");
    check((await tableText(page)) === live, "shared numbers differ from the live ones");
    // The link works in a fresh browser (no session involved).
    const p = await nojs.newPage();
    await p.goto(page.url());
    check((await tableText(p)) === live, "shared numbers differ in another browser");
    await p.close();
    const api = await page.request.get(base + "/api/v1/c/" + m[1]);
    check(api.ok() && (await api.json()).id === m[1], "API of the shared comparison");
  });

  await test("a label with markup renders as text and no dialog fires", async () => {
    const enc = encodeURIComponent(XSS);
    const res = await page.goto(base + "/builds/" + enc);
    check(res.status() === 200, `the build ${XSS} is not stored (run.sh stores it): ${res.status()}`);
    check((await page.locator("h1").innerText()).includes(XSS), "label not shown as text");
    await page.goto(base + "/");
    check(await page.locator("a", { hasText: XSS }).count() >= 1, "label not on the home page");
    await page.goto(base + `/compare?base=${enc}&head=v3.8.0-test`);
    check((await page.locator("h1.versus").innerText()).includes(XSS), "label not in the comparison title");
    await page.goto(base + `/compare?base=${enc}&head=nonexistent${enc}`);
    await page.waitForTimeout(300);
    check(dialogs.length === 0, `dialogs fired: ${dialogs}`);
  });

  await test("pages are readable in a narrow window", async () => {
    const p = await js.newPage();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(base + LIVE);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 1, `page scrolls sideways by ${overflow}px`);
    await p.screenshot({ path: join(out, "compare-narrow.png"), fullPage: false });
    await p.goto(base + "/");
    const overflowHome = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflowHome <= 1, `home scrolls sideways by ${overflowHome}px`);
    await p.close();
  });

  await test("run page links a byte-exact raw download", async () => {
    await page.goto(base + "/");
    const href = await page.locator("table.runs a[href^='/runs/']").first().getAttribute("href");
    await page.goto(base + href);
    const link = page.locator("a", { hasText: "Download the raw file" }).first();
    const url = base + (await link.getAttribute("href"));
    const res = await page.request.get(url);
    check(res.ok(), `download ${res.status()}`);
    check((res.headers()["content-disposition"] || "").startsWith("attachment; filename="), "disposition");
    // The page shows the stored sha256: the download must hash to it.
    const want = (await page.locator(".artifact .copyable").first().innerText()).replace(/copy$/, "").trim();
    const got = createHash("sha256").update(await res.body()).digest("hex");
    check(got === want, `sha256 ${got} != ${want}`);
  });

  // The demo's generated history: two steps on ftrace-tracer-switch `real`, found as alerts.
  const HISTORY = "/history?benchmark=ftrace-tracer-switch&metric=real&machine=generated-rig";

  await test("history page draws every build, its change points, and opens a comparison without JavaScript", async () => {
    const p = await nojs.newPage();
    const res = await p.goto(base + HISTORY);
    check(res.ok(), `status ${res.status()}`);
    check(await p.locator("svg.history-chart").isVisible(), "chart not visible");
    check(await p.locator(".generated").isVisible(), "generated data not marked");
    const builds = await p.locator("svg.history-chart g.build").count();
    check(builds === 60, `${builds} build columns`);
    const marks = await p.locator("svg.history-chart line.change").count();
    check(marks === 2, `${marks} change marks`);
    const titles = await p.$$eval("svg.history-chart line.change title", (t) => t.map((x) => x.textContent));
    check(titles.some((t) => t.includes("gen-024 → gen-025")), `marks ${titles}`);
    const run = await p.locator("svg.history-chart g.build a").first().getAttribute("href");
    check(/^\/runs\/\d+$/.test(run), `dot link ${run}`);
    await p.screenshot({ path: join(out, "history.png"), fullPage: true });
    await p.selectOption("form.pick select[name=base]", "gen-024");
    await p.selectOption("form.pick select[name=head]", "gen-025");
    await Promise.all([p.waitForNavigation(), p.click("form.pick button[type=submit]")]);
    check(p.url().includes("base=gen-024") && p.url().includes("head=gen-025"), `url ${p.url()}`);
    check((await p.locator("h1").first().innerText()).includes("gen-024"), "comparison page not shown");
    await p.close();
  });

  await test("alerts page lists the generated steps and refuses triage without a token", async () => {
    const p = await nojs.newPage();
    await p.goto(base + "/alerts?benchmark=ftrace-tracer-switch");
    const rows = await p.locator("table.alerts tbody tr").count();
    check(rows === 2, `${rows} alerts`);
    const text = await p.locator("table.alerts").innerText();
    check(text.includes("+8.") && text.includes("regression"), "the +8% regression is missing");
    check(text.includes("-5.") && text.includes("improvement"), "the -5% improvement is missing");
    await p.screenshot({ path: join(out, "alerts.png"), fullPage: true });
    const form = p.locator("form.triage").first();
    await form.locator("select[name=state]").selectOption("acknowledged");
    await form.locator("input[name=token]").fill("not-a-token");
    const [resp] = await Promise.all([p.waitForNavigation(), form.locator("button").click()]);
    check(resp.status() === 401, `triage with a wrong token: ${resp.status()}`);
    await p.goto(base + "/alerts?state=untriaged&benchmark=ftrace-tracer-switch");
    check((await p.locator("table.alerts tbody tr").count()) === 2, "state changed without a token");
    await p.close();
  });

  await test("all runs from the home page, narrowed to a machine without JavaScript", async () => {
    const p = await nojs.newPage();
    await p.goto(base + "/");
    await Promise.all([p.waitForNavigation(), p.click("a[href='/runs']")]);
    const all = await p.locator("table.runs tbody tr").count();
    check(all > 20, `${all} runs listed, the home page shows 20`);
    // The demo holds more runs than a page: the next page lists the older ones.
    const ids = async () =>
      (await p.locator("table.runs tbody tr td:first-child").allInnerTexts()).map(Number);
    const first = await ids();
    await Promise.all([p.waitForNavigation(), p.click("p.pages a:text('older runs')")]);
    const older = await ids();
    check(older.length > 0 && older.every((id) => id < Math.min(...first)), `older page: ${older.slice(0, 3)}`);
    await Promise.all([p.waitForNavigation(), p.click("p.pages a:text('newest runs')")]);
    check((await ids())[0] === first[0], "back to the newest runs");
    await p.fill("form.filters input[name=machine]", "generated-rig");
    await Promise.all([p.waitForNavigation(), p.click("form.filters button[type=submit]")]);
    const machines = await p.locator("table.runs tbody tr td:nth-child(3)").allInnerTexts();
    check(machines.length > 0 && machines.every((m) => m === "generated-rig"), `machines: ${[...new Set(machines)]}`);
    check(machines.length < all, "the filter kept every run");
    await p.screenshot({ path: join(out, "runs.png"), fullPage: false });
    await p.close();
  });

  await test("pasting seed 004 into /paste shows the 2.9x claim checked, without JavaScript too", async () => {
    const mail = readFileSync(join(here, "../../server/tests/fixtures/mails/004_2ad225cb2cb455b9.txt"), "utf8");
    for (const ctx of [js, nojs]) {
      const p = await ctx.newPage();
      await p.goto(base + "/");
      await Promise.all([p.waitForNavigation(), p.click("a[href='/paste']")]);
      await p.fill("textarea[name=mail]", mail);
      await Promise.all([p.waitForNavigation(), p.click("form.paste-form button[type=submit]")]);
      const claim = p.locator("#claims tr.claim", { hasText: "2.9x reduction" });
      check(await claim.count() === 1, "no 2.9x claim in the panel");
      const text = await claim.innerText();
      check(text.includes("claimed -65.5%") && text.includes("measured -65.1%"), `claim row: ${text}`);
      check((await claim.locator(".verdict").innerText()).trim() === "consistent", `status: ${text}`);
      const reply = await p.locator("#reply-text").innerText();
      check(reply.includes("> base: original") && reply.includes("> head: apply patch"), "reply does not quote the labels");
      check(reply.split("\n").every((l) => l.length <= 72), "reply wider than 72 columns");
      if (ctx === js) await p.screenshot({ path: join(out, "paste-result.png"), fullPage: true });
      await p.close();
    }
  });

  await test("no script errors on the pages", async () => {
    check(errors.length === 0, errors.join("; "));
  });
} finally {
  await js.close();
  await nojs.close();
  for (const d of profiles) rmSync(d, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
