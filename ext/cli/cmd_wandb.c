/*
** cmd_wandb.c — Weights & Biases on the command line: the W&B flags
** passed to the fetch functions through their environment, a run target
** imported (summarize --run-target, bundle), and the `publish` command
** (wandb_publish).
*/
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --entity/--project/--download-root reach the fetch functions through the
** environment they read (WANDB_ENTITY, WANDB_PROJECT; the download cache
** lives under XDG_CACHE_HOME).  The extension ignores an XDG_CACHE_HOME
** that is not absolute (as the XDG spec says) and would fall back to
** $HOME/.cache, so a relative --download-root is made absolute against the
** current directory first (absolutePath); the directory is created. */
void wandbEnv(const Opts *o){
  const char *z;
  if( specIndex(o, "entity", 6)>=0 && (z = optStr(o, "entity"))!=0 ) setenv("WANDB_ENTITY", z, 1);
  if( specIndex(o, "project", 7)>=0 && (z = optStr(o, "project"))!=0 ) setenv("WANDB_PROJECT", z, 1);
  if( specIndex(o, "download-root", 13)>=0 && (z = optStr(o, "download-root"))!=0 ){
    char *zAbs = absolutePath(z);
    makeDirs(zAbs, 0);
    if( setenv("XDG_CACHE_HOME", zAbs, 1)!=0 ) fail(EXIT_FAIL, "out of memory");
    free(zAbs);
  }
}

/* Import a W&B run target: its jax_profile artifact with alias zAlias
** (NULL: latest), through profsum_import's "alias" option, so that the
** trace keeps its wandb-run source and run metadata. */
sqlite3_int64 importRunTarget(const char *zTarget, const char *zAlias, const char *zLabel,
                                      const char *zOpts){
  char *zSrc = xprintf("wandb-run:%s", zTarget);
  char *zWith = zAlias ? sqlText("SELECT json_set(?1, '$.alias', ?2)", "tt", zOpts, zAlias) : 0;
  sqlite3_int64 id;
  if( zAlias && zWith==0 ) fail(EXIT_FAIL, "cannot add the alias '%s' to the import options", zAlias);
  id = importSource(zSrc, zLabel, zWith ? zWith : zOpts);
  free(zWith);
  sqlite3_free(zSrc);
  return id;
}

/* profsum publish: upload the --summary file (as it is, under its base
** name) and the --report file if given as a W&B artifact (wandb_publish,
** which is passed both paths); --dry-run shows what would be sent, with no
** network.  Emits the response JSON (tools-spec §7). */
int cmdPublish(Opts *o){
  const char *zReport = optStr(o, "report");
  int k = optIdx(o, "alias"), i;
  char *zRes;
  sqlite3_int64 id;
  JObj j;
  Buf a;
  failOutputOver(optStr(o, "output"), optStr(o, "db"), "--db", 1);
  failOutputUnwritable(optStr(o, "output"));
  failBeforeDb(o);
  openDb(optStr(o, "db"), "--db");
  if( zReport && !pathExists(zReport) ) fail(EXIT_FAIL, "--report '%s': %s", zReport, strerror(ENOENT));
  id = summaryArg(o, "{}");
  memset(&j, 0, sizeof(j));
  memset(&a, 0, sizeof(a));
  if( optStr(o, "entity") ) jobjStr(&j, "entity", optStr(o, "entity"));
  if( optStr(o, "project") ) jobjStr(&j, "project", optStr(o, "project"));
  if( optStr(o, "artifact-name") ) jobjStr(&j, "artifact_name", optStr(o, "artifact-name"));
  if( o->anMulti[k]>0 ){
    bufPuts(&a, "[");
    for(i=0; i<o->anMulti[k]; i++){
      if( i ) bufPuts(&a, ", ");
      bufJsonStr(&a, o->azMulti[k][i]);
    }
    bufPuts(&a, "]");
    jobjRaw(&j, "aliases", a.z);
  }
  if( zReport ) jobjStr(&j, "report_path", zReport);
  if( optStr(o, "summary") ) jobjStr(&j, "summary_path", optStr(o, "summary"));
  jobjRaw(&j, "dry_run", optFlag(o, "dry-run") ? "true" : "false");
  zRes = sqlText("SELECT wandb_publish(?1, ?2)", "it", id, jobjEnd(&j));
  if( zRes==0 ) fail(EXIT_FAIL, "wandb_publish returned nothing");
  emit(zRes, optStr(o, "output"));
  free(zRes);
  free(a.z);
  free(j.b.z);
  return EXIT_OK;
}
