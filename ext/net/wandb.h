/*
** wandb.h — Weights & Biases over libcurl: the SQL functions
** wandb_fetch, wandb_fetch_run and wandb_publish (wandb_sql.c), and the
** fetch step that profsum_import uses for W&B sources (wandb_fetch.c).
** The rest of ext/net (http.c, wandb_runmeta.c, wandb_publish.c,
** wandb_int.h) is internal to it; the JSON text W&B hashes is jsontree.h's
** profsumJsonCompact().
**
** Protocol: wandb-http.md (the W&B HTTP protocol notes); behaviour of the reference
** tool: summary-v1-tools-spec.md §7 (publish) and §8 (input side).
** User documentation: docs/wandb.md.
**
** Built with -DPROFSUM_OMIT_NETWORK (make NETWORK=0) everything here still
** exists but fails with "profsum was built without network support (make
** NETWORK=0)", and nothing references libcurl.
*/
#ifndef PROFSUM_WANDB_H
#define PROFSUM_WANDB_H

#include "profsum_int.h"

/*
** Is zSource a W&B source for profsum_import?  True for "wandb:<artifact
** ref>", "wandb-run:<run target>" and "http://" / "https://" URLs (a W&B
** run URL; profsum_import reads no other URLs).  Pure string test.
*/
int profsumWandbIsSource(const char *zSource);

/*
** Fetch a W&B source for profsum_import into the default cache directory
** (${XDG_CACHE_HOME:-~/.cache}/profsum/wandb/<host>/<entity>/<project>/<name>/<vN>,
** <host> that of WANDB_BASE_URL, with its port when not the default), which
** then holds only the files the artifact's manifest lists.
**
**   zSource  "wandb:<entity>/<project>/<name>[:alias|:vN]"  (an artifact),
**            "wandb-run:<run target>"                       (a run: its
**                 committed jax_profile output with alias zAlias (NULL:
**                 "latest"), else the newest; targets as wandb_fetch_run accepts, a bare run id
**                 takes entity/project from WANDB_ENTITY/WANDB_PROJECT),
**            "http(s)://<host>/<entity>/<project>/runs/<run_id>[...]"
**                 (a run URL; its host must be the configured W&B host).
**
** On success returns SQLITE_OK with
**   *pzLocalDir         the directory holding the artifact's files (import
**                       it as an artifact folder);
**   *pzRunMetadataJson  a JSON object text with exactly the keys run_path,
**                       run_id, artifact_ref, artifact_name, hardware_type,
**                       mesh_or_topology, git_sha, config_hash, num_devices,
**                       num_hosts (tools-spec §8.4; null when unknown).  For
**                       an artifact ref the run is the one that logged it
**                       (best effort: without it only artifact_ref and
**                       artifact_name are set).
** Both are sqlite3_malloc'd; the caller frees them with sqlite3_free().
**
** On error returns an SQLite error code (SQLITE_NOMEM without message) and
** sets *pzErr (sqlite3_malloc'd) to a message WITHOUT a function-name
** prefix (the caller adds "profsum_import: "), e.g. "artifact
** 'e/p/x:v3' not found in project 'e/p'".  Messages never contain the API
** key.  db is used only for its allocator-independent context (may be 0).
*/
int profsumWandbFetchForImport(sqlite3 *db, const char *zSource, const char *zAlias,
                               char **pzLocalDir, char **pzRunMetadataJson,
                               char **pzErr);

/*
** Register wandb_fetch(ref [, dest_dir]), wandb_fetch_run(target [,
** dest_dir [, options_json]]) and wandb_publish(trace [, options_json]),
** all SQLITE_UTF8|SQLITE_DIRECTONLY (network I/O: never from a view or
** trigger stored in a database, never DETERMINISTIC).
*/
int profsumRegisterWandb(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_WANDB_H */
