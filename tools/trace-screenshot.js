// Drives a headless Chromium (trace-screenshot.sh): its DevTools trace viewer loads the trace
// from a local HTTP server this script runs, then the clicks below lay the tracks out for the
// picture. The coordinates are DevTools 156's layout at 1600x900; another version may need new
// ones.
const fs = require('fs');
const http = require('http');
const puppeteer = require('puppeteer-core');
const [chromium, tracePath, out] = process.argv.slice(2);
const port = 9333;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

(async () => {
  const server = http.createServer((request, response) => {
    response.writeHead(200, {'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*'});
    response.end(fs.readFileSync(tracePath));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const traceUrl = `http://127.0.0.1:${server.address().port}/trace.json`;
  const browser = await puppeteer.launch({
    executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', `--remote-debugging-port=${port}`]});
  // The viewer needs a page to attach to, though it shows a loaded trace only.
  const target = await browser.newPage();
  await target.goto('about:blank');
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const blank = targets.find((t) => t.url === 'about:blank');
  const page = await browser.newPage();
  await page.setViewport({width: 1600, height: 900});
  await page.setBypassCSP(true); // the viewer's policy allows fetches from its own origin only
  await page.goto(`http://127.0.0.1:${port}/devtools/trace_app.html` +
                  `?ws=127.0.0.1:${port}/devtools/page/${blank.id}` +
                  `&loadTimelineFromURL=${encodeURIComponent(traceUrl)}`, {waitUntil: 'load'});
  await pause(8000);
  const clicks = [
    [1571, 77],  // the flame chart's shortcut help: close
    [15, 40],    // the sidebar: hide
    [10, 129],   // the process: expand into its tracks
  ];
  for (const [x, y] of clicks) { await page.mouse.click(x, y); await pause(800); }
  await page.mouse.move(560, 160); // zoom in around the first step's backward
  for (let i = 0; i < 6; ++i) { await page.keyboard.press('w'); await pause(300); }
  for (const [x, y] of [[20, 146], [20, 185], [20, 223], [660, 164]]) {
    // steps, worker 0, worker 1: expand; then one kernel of the steps track: its summary
    await page.mouse.click(x, y);
    await pause(800);
  }
  await page.mouse.move(800, 600);
  await page.screenshot({path: out});
  await browser.close();
  server.close();
})().catch((error) => { console.error(error); process.exit(1); });
