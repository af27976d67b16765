/*
** import_warn.c — the quality warnings an import adds to a trace's row
** where the reference summarizer would have done otherwise than profsum
** did with the file: its pick in a folder, the file's form (the array
** form, lax syntax, a byte order mark, gzip by content rather than by
** name, a file cut off), the entries its typed decoder rejects, and the
** events left out of the summary.  See import_int.h.
*/
#include "import_int.h"


#define FN "profsum_import"

/* Append zText to the quality_warnings of trace id in schema zSchema. */
static int addWarning(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr,
                      const char *zText){
  return profsumImportExec(db, FN, 1, pzErr, "UPDATE \"%w\".profsum_trace SET quality_warnings = "
      "json_insert(quality_warnings, '$[#]', %Q) WHERE trace_id=%lld", zSchema, zText, (long long)id);
}

/* The warning of ProfsumEngineInfo.topRejected 1 and 2. */
static const char *const azTopRejected[] = {
  "The trace JSON's displayTimeUnit is not a string, which the reference summarizer "
  "rejects (it would reject the whole file); profsum read the events: see profsum_diagnostic.",
  "The trace JSON has data outside its entries that the reference summarizer rejects "
  "(it would reject the whole file); profsum read the events: see profsum_diagnostic.",
};

/* See import_int.h. */
int profsumImportReadWarnings(sqlite3 *db, const char *zSchema, sqlite3_int64 id,
                              const ProfsumEngineInfo *pI, const char *zPickNote,
                              const char *zRefNote, char **pzErr){
  const char *azWarn[9];
  int nWarn = 0, w, rc = SQLITE_OK;
  if( zPickNote ){
    rc = profsumImportExec(db, FN, 1, pzErr, "INSERT INTO \"%w\".profsum_agg_diagnostic"
        "(trace_id, idx, byte_offset, kind, detail) VALUES(%lld, NULL, NULL, 'folder_pick', %Q)",
        zSchema, (long long)id, zPickNote);
    if( rc ) return rc;
  }
  if( zRefNote ) azWarn[nWarn++] = zRefNote;
  if( pI->arrayForm ) azWarn[nWarn++] =
      "The trace is in the JSON array form ([...] without {\"traceEvents\": ...}), which "
      "the reference summarizer rejects (it needs a top-level object); profsum read it.";
  if( pI->noEvents ) azWarn[nWarn++] =
      "The file has no traceEvents array (absent or null): it is likely not a trace, and "
      "this summary is empty. Give the profiler's trace JSON (*.trace.json.gz or "
      "perfetto_trace.json.gz) or its profile folder.";
  if( pI->cutOff ) azWarn[nWarn++] =
      "The trace JSON ends early (inside an entry or before its closing bracket): the file "
      "looks cut off, e.g. copied while the profiler was still writing it. The reference "
      "summarizer would reject it; profsum summarized the events before the cut: see "
      "profsum_diagnostic. (The summary's suspected_truncation flag stays false: it "
      "concerns the profiler's cap on exported events, not a file cut off.)";
  if( pI->laxSyntax ) azWarn[nWarn++] =
      "The trace is not strict JSON (trailing commas or raw control characters in strings), "
      "which the reference summarizer rejects; profsum read it: see profsum_diagnostic.";
  if( pI->gzipByContent==1 ) azWarn[nWarn++] =
      "The file holds gzip data but its name does not end in .gz: the reference summarizer, "
      "which decompresses by the name, would reject it; profsum read it by its content.";
  if( pI->gzipByContent==2 ) azWarn[nWarn++] =
      "The file's name ends in .gz but it holds no gzip data: the reference summarizer, "
      "which decompresses by the name, would reject it; profsum read it by its content.";
  if( pI->byteOrderMark ) azWarn[nWarn++] =
      "The trace JSON starts with a UTF-8 byte order mark, which the reference summarizer "
      "rejects; profsum read past it: see profsum_diagnostic.";
  if( pI->topRejected>0 ) azWarn[nWarn++] = azTopRejected[pI->topRejected-1];
  for(w=0; rc==SQLITE_OK && w<nWarn; w++) rc = addWarning(db, zSchema, id, pzErr, azWarn[w]);
  if( rc==SQLITE_OK && pI->nRejectedByRef>0 ){
    char *zW = sqlite3_mprintf("%lld %s malformed for the reference summarizer "
        "(it would reject the whole file; first: entry %lld, %s); profsum read them as "
        "trace_events does and summarized every event it could read: see profsum_diagnostic.", (long long)pI->nRejectedByRef,
        pI->nRejectedByRef==1 ? "entry is" : "entries are",
        (long long)pI->iFirstRejected, pI->zFirstRejectedKind ? pI->zFirstRejectedKind : "?");
    rc = zW ? addWarning(db, zSchema, id, pzErr, zW) : SQLITE_NOMEM;
    sqlite3_free(zW);
  }
  if( rc==SQLITE_OK && pI->nLeftOut>0 ){
    char *zW = sqlite3_mprintf("%lld complete %s left out of the summary (first: entry %lld, "
        "%s): see profsum_diagnostic (kinds bad_ts, time_out_of_range, id_out_of_range).",
        (long long)pI->nLeftOut, pI->nLeftOut==1 ? "event is" : "events are",
        (long long)pI->iFirstLeftOut, pI->zFirstLeftOutWhy ? pI->zFirstLeftOutWhy : "?");
    rc = zW ? addWarning(db, zSchema, id, pzErr, zW) : SQLITE_NOMEM;
    sqlite3_free(zW);
  }
  return rc;
}
