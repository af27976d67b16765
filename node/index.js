'use strict';
// profsum for Node: the path of profsum.so, and loading it into a
// better-sqlite3 Database.
//
//   const Database = require('better-sqlite3');
//   const profsum = require('profsum');
//   const db = profsum.load(new Database('runs.db'));
//   db.prepare("SELECT profsum_import(?, 'run-7')").get('host.trace.json.gz');

const fs = require('fs');
const path = require('path');

const SO_NAME = 'profsum.so';

// The profsum.so this package loads: PROFSUM_SO when set (it must name a
// file), else the copy packed with the package (make node-pkg), else the one
// built at the root of a source checkout (node/../profsum.so).  Throws an
// Error naming the places it looked.
function getLoadablePath() {
  const env = process.env.PROFSUM_SO;
  if (env) {
    if (!fs.existsSync(env)) throw new Error(`profsum: PROFSUM_SO=${env}: no such file`);
    return path.resolve(env);
  }
  const packed = path.join(__dirname, SO_NAME);
  const checkout = path.join(__dirname, '..', SO_NAME);
  for (const p of [packed, checkout]) {
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`profsum: no ${SO_NAME} in the package (${packed}) nor at the root of a source ` +
                  `checkout (${checkout}); install the package made by \`make node-pkg\`, run ` +
                  '`make profsum.so`, or set PROFSUM_SO');
}

// Load profsum.so into db, a better-sqlite3 Database (any object with
// loadExtension(path); node:sqlite's DatabaseSync too, opened with
// allowExtension: true: extension loading is switched on for the load and
// off again).  Returns db.
function load(db) {
  if (!db || typeof db.loadExtension !== 'function') {
    throw new TypeError('profsum.load: expected a better-sqlite3 Database (an object with loadExtension)');
  }
  const file = getLoadablePath();
  if (typeof db.enableLoadExtension === 'function') {
    db.enableLoadExtension(true);
    try {
      db.loadExtension(file);
    } finally {
      db.enableLoadExtension(false);
    }
  } else {
    db.loadExtension(file);
  }
  return db;
}

module.exports = { getLoadablePath, load, version: require('./package.json').version };
