#!/usr/bin/env node
// Drives svcgate with an unmodified third-party V3 client library (the npm package pinned in package.json,
// the last release of that library that speaks API V3) and checks what the library parses out of each answer.
//
//   node run.js GATEWAY_URL TOKEN [ADMIN_TOKEN]
//
// or the environment: SVCGATE_URL, SVCGATE_TOKEN, SVCGATE_ADMIN_TOKEN (the admin token defaults to the
// simulator's, `svcgate-dev-root-token`; it is only used to create a user). SVCGATE_DEMO_PROJECT names the
// project that must already be listed (default `demo-group/demo-project`); SVCGATE_V3_TRACE=1 prints every
// request and answer, not only the failing ones.
//
// One line per step; on a failure the step, the request the library sent and the answer it got. The last line
// is `N passed, M failed`; the exit status is 0 only when every step passed.
'use strict';

const { URL } = require('url');

// The package's name is the service's brand; nothing else here uses it.
const v3lib = require('gitlab');

const STEP_TIMEOUT_MS = 20000;
const trace = Boolean(process.env.SVCGATE_V3_TRACE); // set it to print every request and answer

const gatewayUrl = process.argv[2] || process.env.SVCGATE_URL;
const token = process.argv[3] || process.env.SVCGATE_TOKEN;
const adminToken = process.argv[4] || process.env.SVCGATE_ADMIN_TOKEN || 'svcgate-dev-root-token';
const demoProjectPath = process.env.SVCGATE_DEMO_PROJECT || 'demo-group/demo-project';

if (!gatewayUrl || !token) {
  console.error('usage: node run.js GATEWAY_URL TOKEN [ADMIN_TOKEN]  (or SVCGATE_URL, SVCGATE_TOKEN)');
  process.exit(2);
}

// ---- Recording what the library sends and receives ----
//
// The library's model methods hand their callback only the parsed body: `null` or `true` when the request
// failed, and the status never. So every request is recorded at the library's transport (`client.slumber`, the
// REST helper it builds each request with), and a step fails when any of its requests got a non-2xx answer.

const exchanges = [];

function describeRequestFromOptions(method, baseUrl, opts) {
  const values = {};
  for (const [key, value] of Object.entries(opts || {})) {
    if (key === 'headers') continue;
    if (key.startsWith('__')) Object.assign(values, value);
    else values[key] = value;
  }
  const url = new URL(baseUrl.replace(/\/$/, ''));
  const sendsQuery = method === 'GET' || method === 'DELETE';
  if (sendsQuery) {
    for (const [key, value] of Object.entries(values)) url.searchParams.append(key, String(value));
  }
  return {
    path: url.pathname,
    query: url.search.replace(/^\?/, ''),
    body: sendsQuery ? '' : JSON.stringify(values),
  };
}

function record(client) {
  const build = client.slumber;
  client.slumber = function (path) {
    const resource = build(path);
    for (const name of ['get', 'post', 'put', 'delete', 'patch']) {
      const send = resource[name];
      resource[name] = function (opts, fn) {
        const method = name.toUpperCase();
        const entry = Object.assign({ method, status: null, answer: null, error: null },
          describeRequestFromOptions(method, resource.base_url, opts));
        exchanges.push(entry);
        // Three parameters, so that the transport passes (err, response, parsed) on, as it does to the library.
        return send.call(resource, opts, function (err, response, parsed) {
          if (response) {
            entry.status = response.statusCode;
            entry.answer = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
            const sent = response.request;
            if (sent && sent.uri) {
              entry.path = sent.uri.pathname;
              entry.query = (sent.uri.search || '').replace(/^\?/, '');
              if (sent.body !== undefined && sent.body !== null) entry.body = String(sent.body);
            }
          }
          if (err && !(err instanceof Object && 'statusCode' in err) && err !== true) entry.error = String(err);
          return fn(err, response, parsed);
        });
      };
    }
    return resource;
  };
}

function showExchange(e) {
  const lines = [`    request: ${e.method} ${e.path}${e.query ? '?' + e.query : ''}`];
  if (e.body) lines.push(`    body:    ${e.body}`);
  if (e.status !== null) lines.push(`    answer:  ${e.status} ${truncate(e.answer || '', 600)}`);
  if (e.error) lines.push(`    error:   ${e.error}`);
  return lines.join('\n');
}

function truncate(text, max) {
  const flat = String(text).replace(/\s+/g, ' ');
  return flat.length > max ? flat.slice(0, max) + '…' : flat;
}

// ---- Steps ----

class StepFailure extends Error {
  constructor(message, exchange) {
    super(message);
    this.exchange = exchange || null;
  }
}

let current = null; // { reject } of the running step, for exceptions thrown inside the library's callbacks
process.on('uncaughtException', (error) => {
  if (current) current.reject(error);
  else {
    console.error('uncaught exception outside any step:', error);
    process.exit(1);
  }
});

// Calls one library method (`invoke` gets the callback to give it) and resolves with what the library parsed.
// Every request it made must have been answered `expect` (default: any 2xx).
function call(invoke, expect) {
  return new Promise((resolve, reject) => {
    const start = exchanges.length;
    invoke((data) => {
      const made = exchanges.slice(start);
      if (made.length === 0) {
        reject(new StepFailure('the library sent no request'));
        return;
      }
      const wrong = made.find((e) =>
        expect === undefined ? !(e.status >= 200 && e.status <= 299) : e.status !== expect);
      if (wrong) {
        const wanted = expect === undefined ? 'a 2xx status' : String(expect);
        reject(new StepFailure(`expected ${wanted}, got ${wrong.status === null ? 'no answer' : wrong.status}`, wrong));
        return;
      }
      resolve(data);
    });
  });
}

function check(condition, message) {
  if (!condition) throw new StepFailure(message);
}

function checkEqual(actual, expected, what) {
  check(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function checkObject(value, what) {
  check(value !== null && typeof value === 'object' && !Array.isArray(value),
    `${what}: expected an object, got ${truncate(JSON.stringify(value), 300)}`);
}

function checkArray(value, what) {
  check(Array.isArray(value), `${what}: expected an array, got ${truncate(JSON.stringify(value), 300)}`);
}

function checkId(value, what) {
  check(Number.isInteger(value) && value > 0, `${what}: expected a positive integer id, got ${JSON.stringify(value)}`);
}

function need(value, what) {
  if (value === undefined || value === null) throw new StepFailure(`not run: needs ${what} from an earlier step`);
  return value;
}

const steps = [];
function step(name, body) {
  steps.push({ name, body });
}

async function runSteps() {
  let passed = 0;
  let failed = 0;
  for (const [index, { name, body }] of steps.entries()) {
    const start = exchanges.length;
    const label = `${String(index + 1).padStart(2)} ${name}`;
    try {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new StepFailure(`no result after ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
        current = { reject };
        Promise.resolve().then(body).then(resolve, reject).finally(() => clearTimeout(timer));
      });
      passed += 1;
      console.log(`ok   ${label}`);
      if (trace) for (const e of exchanges.slice(start)) console.log(showExchange(e));
    } catch (error) {
      failed += 1;
      console.log(`FAIL ${label}`);
      console.log(`    error:   ${error && error.message ? error.message : String(error)}`);
      const shown = (error && error.exchange) || exchanges[exchanges.length - 1];
      if (shown && exchanges.indexOf(shown) >= start) console.log(showExchange(shown));
      else if (!(error instanceof StepFailure) && error && error.stack) console.log(error.stack);
      if (trace) for (const e of exchanges.slice(start)) if (e !== shown) console.log(showExchange(e));
    } finally {
      current = null;
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

// ---- The scenario ----

const user = v3lib({ url: gatewayUrl, token });
const admin = v3lib({ url: gatewayUrl, token: adminToken });
record(user);
record(admin);

const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const s = {}; // what earlier steps created

step('show the current user (GET /user)', async () => {
  const me = await call((done) => user.users.current(done));
  checkObject(me, 'user');
  checkId(me.id, 'user.id');
  check(typeof me.username === 'string' && me.username !== '', 'user.username is missing');
  s.me = me;
});

step(`list projects and find ${demoProjectPath}`, async () => {
  const projects = await call((done) => user.projects.all(done));
  checkArray(projects, 'projects');
  const demo = projects.find((p) => p && p.path_with_namespace === demoProjectPath);
  check(demo, `${demoProjectPath} is not among the ${projects.length} projects listed: ` +
    truncate(JSON.stringify(projects.map((p) => p && p.path_with_namespace)), 300));
  checkId(demo.id, 'project.id');
  checkEqual(demo.path, demoProjectPath.split('/').pop(), 'project.path');
  check([0, 10, 20].includes(demo.visibility_level),
    `project.visibility_level: expected 0, 10 or 20, got ${JSON.stringify(demo.visibility_level)}`);
  checkEqual(demo.public, demo.visibility_level === 20, 'project.public');
  checkObject(demo.permissions, 'project.permissions');
  s.demo = demo;
});

step(`show ${demoProjectPath} by its path`, async () => {
  const demo = need(s.demo, 'the demo project');
  const shown = await call((done) => user.projects.show(demoProjectPath, done));
  checkObject(shown, 'project');
  checkEqual(shown.id, demo.id, 'project.id');
  checkEqual(shown.path_with_namespace, demoProjectPath, 'project.path_with_namespace');
  checkEqual(shown.visibility_level, demo.visibility_level, 'project.visibility_level');
});

step('create a project', async () => {
  const me = need(s.me, 'the current user');
  const name = `v3-client-${stamp}`;
  const description = 'Created by the V3 client test';
  const project = await call((done) => user.projects.create({ name, description, visibility_level: 10 }, done));
  checkObject(project, 'project');
  checkId(project.id, 'project.id');
  // Kept for the later steps as soon as it exists, so one wrong field fails this step only.
  s.project = project;
  s.branch = typeof project.default_branch === 'string' && project.default_branch ? project.default_branch : 'master';
  checkEqual(project.name, name, 'project.name');
  checkEqual(project.path, name, 'project.path');
  checkEqual(project.path_with_namespace, `${me.username}/${name}`, 'project.path_with_namespace');
  checkEqual(project.description, description, 'project.description');
  checkEqual(project.visibility_level, 10, 'project.visibility_level');
  checkEqual(project.public, false, 'project.public');
});

step('show the project', async () => {
  const project = need(s.project, 'the created project');
  const shown = await call((done) => user.projects.show(project.id, done));
  checkObject(shown, 'project');
  checkEqual(shown.id, project.id, 'project.id');
  checkEqual(shown.name, project.name, 'project.name');
  checkEqual(shown.description, project.description, 'project.description');
  checkEqual(shown.visibility_level, 10, 'project.visibility_level');
  checkEqual(shown.public, false, 'project.public');
});

// ---- Issues and their notes ----

step('create an issue', async () => {
  const project = need(s.project, 'the created project');
  const title = `V3 client issue ${stamp}`;
  const description = 'Opened through the V3 API';
  const issue = await call((done) => user.issues.create(project.id, { title, description, labels: 'v3,client' }, done));
  checkObject(issue, 'issue');
  checkId(issue.id, 'issue.id');
  s.issue = issue;
  checkId(issue.iid, 'issue.iid');
  checkEqual(issue.project_id, project.id, 'issue.project_id');
  checkEqual(issue.title, title, 'issue.title');
  checkEqual(issue.description, description, 'issue.description');
  checkEqual(issue.state, 'opened', 'issue.state');
  checkArray(issue.labels, 'issue.labels');
  checkEqual(JSON.stringify([...issue.labels].sort()), JSON.stringify(['client', 'v3']), 'issue.labels');
  checkObject(issue.author, 'issue.author');
  checkEqual(issue.author.id, s.me && s.me.id, 'issue.author.id');
});

step('show the issue by its global id', async () => {
  const project = need(s.project, 'the created project');
  const issue = need(s.issue, 'the created issue');
  const shown = await call((done) => user.issues.show(project.id, issue.id, done));
  checkObject(shown, 'issue');
  checkEqual(shown.id, issue.id, 'issue.id');
  checkEqual(shown.iid, issue.iid, 'issue.iid');
  checkEqual(shown.title, issue.title, 'issue.title');
  checkEqual(shown.project_id, project.id, 'issue.project_id');
});

step('list the project\'s issues', async () => {
  const project = need(s.project, 'the created project');
  const issue = need(s.issue, 'the created issue');
  const issues = await call((done) => user.projects.issues.list(project.id, done));
  checkArray(issues, 'issues');
  const listed = issues.find((i) => i && i.id === issue.id);
  check(listed, `issue id ${issue.id} is not among the ${issues.length} listed: ` +
    truncate(JSON.stringify(issues.map((i) => i && i.id)), 300));
  checkEqual(listed.iid, issue.iid, 'issue.iid');
  checkEqual(listed.title, issue.title, 'issue.title');
});

step('edit the issue (new title, close it)', async () => {
  const project = need(s.project, 'the created project');
  const issue = need(s.issue, 'the created issue');
  const title = `${issue.title} (edited)`;
  const edited = await call((done) => user.issues.edit(project.id, issue.id, { title, state_event: 'close' }, done));
  checkObject(edited, 'issue');
  checkEqual(edited.id, issue.id, 'issue.id');
  checkEqual(edited.iid, issue.iid, 'issue.iid');
  checkEqual(edited.title, title, 'issue.title');
  checkEqual(edited.state, 'closed', 'issue.state');
  checkEqual(edited.description, issue.description, 'issue.description');
});

step('add a note to the issue', async () => {
  const project = need(s.project, 'the created project');
  const issue = need(s.issue, 'the created issue');
  const body = `A note from the V3 client ${stamp}`;
  const note = await call((done) => user.notes.create(project.id, issue.id, { body }, done));
  checkObject(note, 'note');
  checkId(note.id, 'note.id');
  s.note = note;
  checkEqual(note.body, body, 'note.body');
  checkObject(note.author, 'note.author');
  checkEqual(note.author.id, s.me && s.me.id, 'note.author.id');
});

step('list the issue\'s notes', async () => {
  const project = need(s.project, 'the created project');
  const issue = need(s.issue, 'the created issue');
  const note = need(s.note, 'the created note');
  const notes = await call((done) => user.projects.issues.notes.all(project.id, issue.id, done));
  checkArray(notes, 'notes');
  const listed = notes.find((n) => n && n.id === note.id);
  check(listed, `note id ${note.id} is not among the ${notes.length} listed: ` +
    truncate(JSON.stringify(notes.map((n) => n && n.id)), 300));
  checkEqual(listed.body, note.body, 'note.body');
});

// ---- Repository files and branches ----

const filePath = 'docs/v3-client.md';
const fileText = `# Written by the V3 client\n\nrun ${stamp}\n`;
const fileTextUpdated = `${fileText}\nand updated.\n`;

function readFile(projectId, ref) {
  return call((done) => user.projects.repository.showFile(projectId, { file_path: filePath, ref }, done));
}

function checkFile(file, ref, text) {
  checkObject(file, 'file');
  checkEqual(file.file_path, filePath, 'file.file_path');
  checkEqual(file.file_name, filePath.split('/').pop(), 'file.file_name');
  checkEqual(file.ref, ref, 'file.ref');
  checkEqual(file.encoding, 'base64', 'file.encoding');
  check(typeof file.content === 'string', `file.content: expected a string, got ${JSON.stringify(file.content)}`);
  checkEqual(Buffer.from(file.content, 'base64').toString('utf8'), text, 'file.content (decoded)');
  checkEqual(file.size, Buffer.byteLength(text), 'file.size');
  check(typeof file.blob_id === 'string' && file.blob_id !== '', 'file.blob_id is missing');
  check(typeof file.commit_id === 'string' && file.commit_id !== '', 'file.commit_id is missing');
}

step('create a repository file', async () => {
  const project = need(s.project, 'the created project');
  const created = await call((done) => user.projects.repository.createFile({
    projectId: project.id,
    file_path: filePath,
    branch_name: s.branch,
    encoding: 'text',
    content: fileText,
    commit_message: 'Add a file through the V3 API',
  }, done));
  s.file = true;
  checkObject(created, 'answer');
  checkEqual(created.file_path, filePath, 'file_path');
  checkEqual(created.branch_name, s.branch, 'branch_name');
});

step('read the repository file', async () => {
  const project = need(s.project, 'the created project');
  need(s.file, 'the created file');
  checkFile(await readFile(project.id, s.branch), s.branch, fileText);
});

step('update the repository file and read it back', async () => {
  const project = need(s.project, 'the created project');
  need(s.file, 'the created file');
  const updated = await call((done) => user.projects.repository.updateFile({
    projectId: project.id,
    file_path: filePath,
    branch_name: s.branch,
    encoding: 'text',
    content: fileTextUpdated,
    commit_message: 'Update a file through the V3 API',
  }, done));
  const answer = exchanges[exchanges.length - 1];
  checkFile(await readFile(project.id, s.branch), s.branch, fileTextUpdated);
  try {
    checkObject(updated, 'answer');
    checkEqual(updated.file_path, filePath, 'file_path');
    checkEqual(updated.branch_name, s.branch, 'branch_name');
  } catch (error) {
    if (error instanceof StepFailure && !error.exchange) error.exchange = answer;
    throw error;
  }
});

step('delete the repository file and see it gone', async () => {
  const project = need(s.project, 'the created project');
  need(s.file, 'the created file');
  // The library has no method for this V3 route; its own DELETE helper sends the route's parameters in the
  // query, as V3 accepted them.
  const query = new URLSearchParams({
    file_path: filePath,
    branch_name: s.branch,
    commit_message: 'Delete a file through the V3 API',
  }).toString();
  const deleted = await call((done) => user.delete(`projects/${project.id}/repository/files?${query}`, done));
  checkEqual(deleted, true, 'the library\'s result');
  const answer = exchanges[exchanges.length - 1];
  const gone = await call((done) => user.projects.repository.showFile(project.id, { file_path: filePath, ref: s.branch }, done), 404);
  checkEqual(gone, null, 'the library\'s result for the deleted file');
  // The library drops the delete's body; V3 answered 200 with the file's path and branch, as for create.
  try {
    checkEqual(answer.status, 200, 'the status of the answer');
    let body = null;
    try {
      body = JSON.parse(answer.answer);
    } catch (error) {
      throw new StepFailure(`the answer is not JSON: ${error.message}`);
    }
    checkObject(body, 'the answer');
    checkEqual(body.file_path, filePath, 'file_path in the answer');
    checkEqual(body.branch_name, s.branch, 'branch_name in the answer');
  } catch (error) {
    if (error instanceof StepFailure && !error.exchange) error.exchange = answer;
    throw error;
  }
});

step('create a branch', async () => {
  const project = need(s.project, 'the created project');
  const name = `v3-client-feature-${stamp}`;
  const branch = await call((done) => user.projects.repository.createBranch({
    projectId: project.id,
    branch_name: name,
    ref: s.branch,
  }, done));
  checkObject(branch, 'branch');
  checkEqual(branch.name, name, 'branch.name');
  checkObject(branch.commit, 'branch.commit');
  check(typeof branch.commit.id === 'string' && /^[0-9a-f]{40}$/.test(branch.commit.id),
    `branch.commit.id: expected a commit sha, got ${JSON.stringify(branch.commit.id)}`);
  s.feature = branch;
  checkEqual(branch.protected, false, 'branch.protected');
});

step('list branches', async () => {
  const project = need(s.project, 'the created project');
  const feature = need(s.feature, 'the created branch');
  const branches = await call((done) => user.projects.repository.listBranches(project.id, done));
  checkArray(branches, 'branches');
  const names = branches.map((b) => b && b.name);
  const main = branches.find((b) => b && b.name === s.branch);
  const listed = branches.find((b) => b && b.name === feature.name);
  check(main, `${s.branch} is not among the branches listed: ${JSON.stringify(names)}`);
  check(listed, `${feature.name} is not among the branches listed: ${JSON.stringify(names)}`);
  checkEqual(listed.commit && listed.commit.id, feature.commit.id, 'branch.commit.id');
  checkEqual(main.commit && main.commit.id, feature.commit.id, `${s.branch}'s commit.id`);
});

// ---- Merge requests ----

step('commit a file on the new branch', async () => {
  const project = need(s.project, 'the created project');
  const feature = need(s.feature, 'the created branch');
  const created = await call((done) => user.projects.repository.createFile({
    projectId: project.id,
    file_path: 'feature.txt',
    branch_name: feature.name,
    content: 'a change to merge\n',
    commit_message: 'A change to merge',
  }, done));
  s.featureCommitted = true;
  checkObject(created, 'answer');
  checkEqual(created.file_path, 'feature.txt', 'file_path');
  checkEqual(created.branch_name, feature.name, 'branch_name');
});

step('create a merge request', async () => {
  const project = need(s.project, 'the created project');
  const feature = need(s.feature, 'the created branch');
  const title = `V3 client merge request ${stamp}`;
  // Tried even when the commit on the branch failed (a merge request may have nothing to merge), so that this
  // route is exercised on its own; the hint says why it might have failed.
  const mr = await call((done) => user.projects.merge_requests.add(project.id, feature.name, s.branch, undefined, title, done))
    .catch((error) => {
      if (!s.featureCommitted) error.message += ' (the commit on the new branch failed, so the branches do not differ)';
      throw error;
    });
  checkObject(mr, 'merge request');
  checkId(mr.id, 'merge_request.id');
  s.mr = mr;
  checkId(mr.iid, 'merge_request.iid');
  checkEqual(mr.project_id, project.id, 'merge_request.project_id');
  checkEqual(mr.title, title, 'merge_request.title');
  checkEqual(mr.source_branch, feature.name, 'merge_request.source_branch');
  checkEqual(mr.target_branch, s.branch, 'merge_request.target_branch');
  checkEqual(mr.state, 'opened', 'merge_request.state');
  checkObject(mr.author, 'merge_request.author');
  checkEqual(mr.author.id, s.me && s.me.id, 'merge_request.author.id');
});

step('list merge requests', async () => {
  const project = need(s.project, 'the created project');
  const mr = need(s.mr, 'the created merge request');
  const mrs = await call((done) => user.projects.merge_requests.list(project.id, done));
  checkArray(mrs, 'merge requests');
  const listed = mrs.find((m) => m && m.id === mr.id);
  check(listed, `merge request id ${mr.id} is not among the ${mrs.length} listed: ` +
    truncate(JSON.stringify(mrs.map((m) => m && m.id)), 300));
  checkEqual(listed.iid, mr.iid, 'merge_request.iid');
  checkEqual(listed.title, mr.title, 'merge_request.title');
});

step('show the merge request by its global id', async () => {
  const project = need(s.project, 'the created project');
  const mr = need(s.mr, 'the created merge request');
  const shown = await call((done) => user.projects.merge_requests.show(project.id, mr.id, done));
  checkObject(shown, 'merge request');
  checkEqual(shown.id, mr.id, 'merge_request.id');
  checkEqual(shown.iid, mr.iid, 'merge_request.iid');
  checkEqual(shown.title, mr.title, 'merge_request.title');
  checkEqual(shown.source_branch, mr.source_branch, 'merge_request.source_branch');
  checkEqual(shown.target_branch, mr.target_branch, 'merge_request.target_branch');
});

step('comment on the merge request', async () => {
  const project = need(s.project, 'the created project');
  const mr = need(s.mr, 'the created merge request');
  const text = `A comment from the V3 client ${stamp}`;
  const comment = await call((done) => user.projects.merge_requests.comment(project.id, mr.id, text, done));
  checkObject(comment, 'comment');
  checkEqual(comment.note, text, 'comment.note');
  checkObject(comment.author, 'comment.author');
  checkEqual(comment.author.id, s.me && s.me.id, 'comment.author.id');
});

// ---- Users and members ----

step('create a user (admin token)', async () => {
  const username = `v3client${stamp}`;
  const params = {
    email: `${username}@example.com`,
    username,
    name: `V3 Client ${stamp}`,
    password: `pw-${stamp}-${stamp}`,
  };
  const created = await call((done) => admin.users.create(params, done));
  checkObject(created, 'user');
  checkId(created.id, 'user.id');
  s.member = Object.assign({}, created, { username: params.username });
  checkEqual(created.username, params.username, 'user.username');
  checkEqual(created.name, params.name, 'user.name');
  checkEqual(created.email, params.email, 'user.email');
});

step('add the user as a project member', async () => {
  const project = need(s.project, 'the created project');
  const member = need(s.member, 'the created user');
  const added = await call((done) => user.projects.members.add(project.id, member.id, 30, done));
  checkObject(added, 'member');
  checkEqual(added.id, member.id, 'member.id');
  checkEqual(added.username, member.username, 'member.username');
  checkEqual(added.access_level, 30, 'member.access_level');
});

step('list project members', async () => {
  const project = need(s.project, 'the created project');
  const member = need(s.member, 'the created user');
  const members = await call((done) => user.projects.members.list(project.id, done));
  checkArray(members, 'members');
  const listed = members.find((m) => m && m.id === member.id);
  check(listed, `user id ${member.id} is not among the ${members.length} members listed: ` +
    truncate(JSON.stringify(members.map((m) => m && m.username)), 300));
  checkEqual(listed.username, member.username, 'member.username');
  checkEqual(listed.access_level, 30, 'member.access_level');
});

runSteps().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
