// What the browser tests share: the command line, Chromium's flags, the skip rule, and a
// page opened with every listener a test of the report needs.
'use strict';
const path = require('path');
const fs = require('fs');
const {pathToFileURL} = require('url');

function parseArgs(argv, extra) {
  const a = {commlens: 'build/src/cli/commlens', out: 'build/browser-test', chromium: '/usr/bin/chromium',
    nodeModules: 'build/npm/node_modules', samples: []};
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--commlens') a.commlens = v, i++;
    else if (k === '--out') a.out = v, i++;
    else if (k === '--chromium') a.chromium = v, i++;
    else if (k === '--node-modules') a.nodeModules = v, i++;
    else if (k === '--sample' && extra && extra.samples) a.samples.push(v), i++;
    else { console.error(`unknown argument ${k}`); process.exit(64); }
  }
  return a;
}

function skip(why) {
  console.log(`skipped: ${why} (scripts/setup.sh installs it)`);
  process.exit(77);
}

// The flags of /work/shared/reference/browser-testing.md: headless as root, and no
// background traffic that a closed network would refuse.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Chromium through playwright-core, or exit 77 when either is missing.
async function launch(a) {
  let chromium;
  try {
    ({chromium} = require(path.resolve(a.nodeModules, 'playwright-core')));
  } catch (e) {
    skip(`playwright-core not found in ${a.nodeModules}`);
  }
  if (!fs.existsSync(a.chromium)) skip(`${a.chromium} not found`);
  if (!fs.existsSync(a.commlens)) { console.error(`no commlens binary at ${a.commlens}`); process.exit(1); }
  fs.mkdirSync(a.out, {recursive: true});
  // playwright-core starts Chromium with a fresh, empty profile of its own each launch.
  return chromium.launch({executablePath: a.chromium, args: CHROMIUM_ARGS});
}

// Opens |file| and records, into the returned |problems|, every console error, uncaught
// exception, dialog (alert, confirm, prompt), Content-Security-Policy violation and
// request for anything but the page itself.
async function openPage(browser, file) {
  const problems = [];
  const url = pathToFileURL(path.resolve(file)).href;
  const context = await browser.newContext({viewport: {width: 1440, height: 900}, deviceScaleFactor: 1});
  const page = await context.newPage();
  // Injected by the browser before the page's own scripts (not subject to its policy).
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation',
      (e) => (window.__cspViolations = window.__cspViolations || []).push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`dialog (${d.type()}): ${d.message()}`); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { if (r.url() !== url) problems.push(`request: ${r.url()}`); });
  page.on('requestfailed', (r) => { if (r.url() === url) problems.push(`the page itself failed to load`); });
  const t0 = Date.now();
  await page.goto(url, {waitUntil: 'load'});
  await page.waitForSelector('body[data-rendered="true"]', {timeout: 30000})
    .catch(() => problems.push('the page did not finish drawing (body[data-rendered] never set)'));
  return {page, context, problems, loadMs: Date.now() - t0};
}

module.exports = {parseArgs, skip, launch, openPage, CHROMIUM_ARGS};
