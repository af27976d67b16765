/*
** cmd_summary.c — the commands on one profile: `summarize` (import and
** emit the profile_summary.v1 JSON), `report` (markdown or HTML; on a
** terminal the markdown is rendered from visible strings) and `query`.
*/
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "summary_doc.h"     /* profsumDocFromJson, profsumDocReportMd */
#include "query.h"           /* profsumQueryKind */
#include "sqlcall.h"         /* profsumTopKClamp */
#include "profsum_reader.h"   /* profsumSniffContent */

static void cappedNote(sqlite3_int64 id);

/* 1 when path z does not exist as Python's Path.exists() sees it: a
** missing component, or one that is not a directory. */
static int isMissing(const char *z){
  return access(z, F_OK)!=0 && (errno==ENOENT || errno==ENOTDIR);
}

/* Refuse a folder zPath given to option --zOpt, which reads one file (zWhat,
** summary §1.1: summarize_trace and summarize_xplane take one file; the
** reference opens the path as a file and stops with IsADirectoryError,
** exit 1).  The import would take a folder as --profile-dir does and
** summarize whatever trace it picks there, so the error names the option,
** the path and the option that reads a folder.  A remote source or a path
** that is not a folder returns. */
static void failIfFolder(const char *zOpt, const char *zPath, const char *zWhat){
  if( isRemoteSource(zPath) || !isDir(zPath) ) return;
  fail(EXIT_FAIL, "option '--%s': '%s' is a directory, not %s; to summarize the profile in a "
       "folder use --profile-dir '%s'", zOpt, zPath, zWhat, zPath);
}

/* profsum summarize: import one profile (--trace-file, --xplane-file,
** --profile-dir: XPlane first as summary §1.1 says, --artifact or
** --run-target) into a temporary database or --db and emit
** its profile_summary.v1 JSON. */
int cmdSummarize(Opts *o){
  const char *zTrace = optStr(o, "trace-file"), *zX = optStr(o, "xplane-file");
  const char *zArt = optStr(o, "artifact"), *zRun = optStr(o, "run-target");
  const char *zDir = optStr(o, "profile-dir"), *zDb = optStr(o, "db");
  char *zOpts, *zJson;
  sqlite3_int64 id;
  if( !zTrace && !zX && !zArt && !zRun && !zDir ){
    fail(EXIT_USAGE, "Specify one of --trace-file, --xplane-file, --profile-dir, --artifact, or --run-target.");
  }
  if( (optStr(o, "label") || optStr(o, "series") || optFlag(o, "replace")) && !zDb ){
    fail(EXIT_USAGE, "--label, --series and --replace apply to --db");
  }
  failOutputOver(optStr(o, "output"), zDb, "--db", 1);
  failOutputOverInput(optStr(o, "output"), zTrace, "--trace-file");
  failOutputOverInput(optStr(o, "output"), zX, "--xplane-file");
  failOutputUnwritable(optStr(o, "output"));
  zOpts = knobOptions(o, optFlag(o, "replace"), optStr(o, "series"));
  if( optStr(o, "xplane-output-dir") || optFlag(o, "xplane-count-trace-events") ){
    errLine("profsum summarize: note: %s ignored: profsum does not run xprof's converter (its "
            "tables and trace-event count); the summary comes from the XPlane's timeline",
            optStr(o, "xplane-output-dir") ? (optFlag(o, "xplane-count-trace-events")
            ? "--xplane-output-dir and --xplane-count-trace-events are" : "--xplane-output-dir is")
            : "--xplane-count-trace-events is");
  }
  wandbEnv(o);
  openDb(zDb, "--db");
  if( zTrace ){
    if( !isRemoteSource(zTrace) && isMissing(zTrace) ){
      fail(EXIT_FAIL, "Trace file does not exist: %s", zTrace);      /* the reference's words */
    }
    failIfFolder("trace-file", zTrace, "one trace file (Perfetto/Chrome JSON, .json or .json.gz)");
    id = importSource(zTrace, optStr(o, "label"), zOpts);
  }else if( zX ){
    /* an XSpace, told by its content (or name): read as summary §6.1 says */
    if( !isRemoteSource(zX) && isMissing(zX) ){
      fail(EXIT_FAIL, "XPlane protobuf does not exist: %s", zX);     /* the reference's words */
    }
    failIfFolder("xplane-file", zX, "one XPlane protobuf file (.xplane.pb)");
    if( !isRemoteSource(zX) && profsumSniffContent(zX)==PROFSUM_FMT_JSON ){
      /* read by its content: say so before the summary, or a JSON error
      ** (a pipe is not sniffed: its bytes are the import's) */
      errLine("profsum summarize: note: '%s' is not an XPlane protobuf by its content (it starts "
              "as JSON or as neither format): it is read as a trace JSON", zX);
    }
    id = importSource(zX, optStr(o, "label"), zOpts);
  }else if( zArt ){
    char *zSrc = xprintf("wandb:%s", zArt);
    id = importSource(zSrc, optStr(o, "label"), zOpts);
    sqlite3_free(zSrc);
  }else if( zRun ){
    id = importRunTarget(zRun, optStr(o, "alias"), optStr(o, "label"), zOpts);
  }else{
    if( isMissing(zDir) ){
      fail(EXIT_FAIL, "Profile directory does not exist: %s", zDir);   /* the reference's words */
    }
    /* a file: the reference's walk finds no XPlane and no JSON under it */
    if( !isDir(zDir) ) fail(EXIT_FAIL, "No *.xplane.pb file found under '%s'. '%s' is not a "
                            "directory.", zDir, zDir);
    id = importSource(zDir, optStr(o, "label"), zOpts);
  }
  zJson = sqlText("SELECT profsum_summary_json(?1)", "i", id);
  if( zJson==0 ) fail(EXIT_FAIL, "profsum_summary_json returned nothing");
  cappedNote(id);
  emit(zJson, optStr(o, "output"));
  free(zJson);
  free(zOpts);
  return EXIT_OK;
}

/* Append to b the KPI section of report zReport (profsum_report_md(id, k,
** '{"kpis": true}')) as a terminal shows it: every row rebuilt from the
** rows of profsum_kpis with its text cells visible (bufCellVisible), after
** checking that the section is exactly those rows (the value cell is taken
** from the section as it is).  When the section is not what is expected,
** it is appended unchanged (the caller's output filter still shows its
** control characters escaped; only a newline in a cell then stays). */
static void kpisForTerminal(Buf *b, sqlite3_int64 id, long long k, const char *zReport){
  static const char zHead[] = "\n## KPIs\n| Kind | KPI | Device | Value | Unit | Band | Explanation |\n"
                              "|---|---|---|---:|---|---|---|\n";
  char *zBase = sqlText("SELECT profsum_report_md(?1, ?2)", "ii", id, (sqlite3_int64)k);
  const char *zKpi, *zAt;
  sqlite3_stmt *p = 0;
  size_t nBase = zBase ? strlen(zBase) : 0;
  int ok = 0;
  Buf out;
  memset(&out, 0, sizeof(out));
  if( zBase==0 || strncmp(zReport, zBase, nBase)!=0 ){
    free(zBase);
    bufPuts(b, zReport);                   /* not base + section: as it is */
    return;
  }
  free(zBase);
  zKpi = zReport + nBase;
  if( zKpi[0]==0 ) return;                 /* no KPI rows */
  if( strncmp(zKpi, zHead, sizeof(zHead)-1)==0
   && sqlite3_prepare_v2(g_db, "SELECT kind, kpi, coalesce(device, 'all'), unit, band, explanation "
                         "FROM main.profsum_kpis WHERE trace_id=?1", -1, &p, 0)==SQLITE_OK ){
    ok = 1;
    bufPuts(&out, zHead);
    zAt = zKpi + sizeof(zHead)-1;
    sqlite3_bind_int64(p, 1, id);
    while( ok && sqlite3_step(p)==SQLITE_ROW ){
      const char *az[6];
      char *zPre, *zSuf;
      size_t nPre, nSuf, nVal;
      int c;
      for(c=0; c<6; c++){
        az[c] = (const char*)sqlite3_column_text(p, c);
        if( az[c]==0 ) az[c] = "";
      }
      zPre = xprintf("| %s | %s | %s | ", az[0], az[1], az[2]);
      zSuf = xprintf(" | %s | %s | %s |\n", az[3], az[4], az[5]);
      nPre = strlen(zPre);
      nSuf = strlen(zSuf);
      ok = strncmp(zAt, zPre, nPre)==0;
      if( ok ){
        nVal = strcspn(zAt+nPre, " |\n");
        ok = nVal>0 && strncmp(zAt+nPre+nVal, zSuf, nSuf)==0;
        if( ok ){
          /* the six text cells visible, the value cell (after the third)
          ** as the section has it */
          for(c=0; c<6; c++){
            bufPuts(&out, c ? " | " : "| ");
            bufCellVisible(&out, az[c]);
            if( c==2 ){
              bufPuts(&out, " | ");
              bufAppend(&out, zAt+nPre, nVal);
            }
          }
          bufPuts(&out, " |\n");
          zAt += nPre + nVal + nSuf;
        }
      }
      sqlite3_free(zPre);
      sqlite3_free(zSuf);
    }
    if( sqlite3_finalize(p)!=SQLITE_OK ) ok = 0;
    if( ok && zAt[0]!=0 ) ok = 0;          /* rows the query did not give */
  }
  if( ok ) bufPuts(b, out.z);
  else bufPuts(b, zKpi);
  free(out.z);
}

/* The markdown report of trace id, top_k k, as a terminal shows it (zReport
** is what profsum_report_md gave; bKpis: with the KPI section): the
** reference's report of the trace's summary document whose strings were
** made visible (jsonVisible), so a name with a newline stays in its table
** cell ("a\nb") and no control character reaches the terminal; the KPI
** section likewise (kpisForTerminal).  Returns a malloc'd text, or 0 when
** the document cannot be rendered so (the caller then prints zReport,
** which its output filter still shows visible). */
static char *reportMdForTerminal(sqlite3_int64 id, long long k, int bKpis, const char *zReport){
  char *zJson = sqlText("SELECT profsum_summary_json(?1)", "i", id), *zVis, *zMd, *zErr = 0;
  ProfsumDoc *d = 0;
  Buf b;
  if( zJson==0 ) return 0;
  zVis = jsonVisible(zJson);
  free(zJson);
  if( profsumDocFromJson(zVis, -1, &d, &zErr)!=SQLITE_OK ){
    sqlite3_free(zErr);
    free(zVis);
    return 0;
  }
  free(zVis);
  zMd = profsumDocReportMd(d, profsumTopKClamp(k));
  profsumDocFree(d);
  if( zMd==0 ) fail(EXIT_FAIL, "out of memory");
  memset(&b, 0, sizeof(b));
  bufPuts(&b, zMd);
  sqlite3_free(zMd);
  if( bKpis ) kpisForTerminal(&b, id, k, zReport);
  return b.z;
}

/* profsum report: the markdown report (or --format html) of --summary, or
** of --trace in --db; on a terminal the markdown comes from visible
** strings (reportMdForTerminal). */
int cmdReport(Opts *o){
  long long k = optInt(o, "top-k", 10);    /* any int: a slice bound */
  const char *zFormat = optStr(o, "format");
  char *zOpts, *zMd;
  sqlite3_int64 id;
  int isHtml = 0;
  if( zFormat ){
    if( strcmp(zFormat, "html")==0 ) isHtml = 1;
    else if( strcmp(zFormat, "md")!=0 ) fail(EXIT_USAGE, "--format must be md or html, not '%s'", zFormat);
  }
  if( isHtml && (k<1 || k>64) ) fail(EXIT_USAGE, "--top-k must be from 1 to 64 with --format html");
  failOutputOver(optStr(o, "output"), optStr(o, "db"), "--db", 1);
  failOutputOverInput(optStr(o, "output"), optStr(o, "summary"), "--summary");
  failOutputUnwritable(optStr(o, "output"));
  zOpts = knobOptions(o, 0, 0);
  failBeforeDb(o);
  openDb(optStr(o, "db"), "--db");
  id = summaryArg(o, zOpts);
  if( isHtml && optFlag(o, "profsum") ) fail(EXIT_USAGE, "--profsum applies to the markdown report "
                                             "(the HTML report has profsum's sections already)");
  zMd = sqlText(isHtml ? "SELECT profsum_report_html(?1, ?2)"
                : optFlag(o, "profsum") ? (optFlag(o, "kpis")
                  ? "SELECT profsum_report_md(?1, ?2, '{\"kpis\": true, \"profsum\": true}')"
                  : "SELECT profsum_report_md(?1, ?2, '{\"profsum\": true}')")
                : optFlag(o, "kpis") ? "SELECT profsum_report_md(?1, ?2, '{\"kpis\": true}')"
                : "SELECT profsum_report_md(?1, ?2)", "ii", id, (sqlite3_int64)k);
  if( zMd==0 ) fail(EXIT_FAIL, "the report function returned nothing");
  cappedNote(id);
  if( g_bOutTty && !isHtml && optStr(o, "output")==0 && !optFlag(o, "profsum") ){
    char *zTerm = reportMdForTerminal(id, k, optFlag(o, "kpis"), zMd);
    if( zTerm ){ free(zMd); zMd = zTerm; }
  }
  emit(zMd, optStr(o, "output"));
  free(zMd);
  free(zOpts);
  return EXIT_OK;
}

/* The intents of tools-spec §2, for `query --list`. */
static const struct { const char *zType, *zWhen, *zExample; } aIntent[] = {
  {"top_ops", "contains \"top\" and \"op\"", "What are the top ops by exclusive time?"},
  {"compute_vs_communication", "contains \"comm\"/\"collective\" and one of \"compute\", \"dominating\", \"dominant\", \"worst\"",
   "Is comm or compute dominating? Which collective is worst?"},
  {"collective_breakdown", "contains \"collective\" or \"communication\"", "Show the collective breakdown"},
  {"pre_op_gap", "contains \"gap\" and \"before\" (target: the text after \"before\")", "What is the gap before copy.564?"},
  {"gap_region_context", "contains \"context\" and one of \"gap\", \"op\", \"copy\" (target: after \"for\"/\"of\"/\"op\", or a name like copy.1)",
   "show context for op copy.564"},
  {"hierarchical_regions", "contains \"region\" or \"hierarch\"", "show hierarchical regions"},
  {"bound_analysis", "contains \"memory-bound\" or \"compute-bound\"", "Is this memory-bound or compute-bound?"},
  {"comparison_hint", "contains \"improve\", \"regress\" or \"compare\"", "Did this change regress?"},
  {"optimization_candidates", "matches none of the above", "What should we try next?"},
};

/* Edit distance between the ASCII-lower-cased a and b (each cut to 120
** bytes): how far an asked-for name is from a known one. */
static int nameDistance(const char *a, const char *b){
  int na = (int)strlen(a), nb = (int)strlen(b), i, j;
  int aRow[121];
  if( na>120 ) na = 120;
  if( nb>120 ) nb = 120;
  for(j=0; j<=nb; j++) aRow[j] = j;
  for(i=1; i<=na; i++){
    int prev = aRow[0], ca = a[i-1]>='A' && a[i-1]<='Z' ? a[i-1]+32 : a[i-1];
    aRow[0] = i;
    for(j=1; j<=nb; j++){
      int cb = b[j-1]>='A' && b[j-1]<='Z' ? b[j-1]+32 : b[j-1];
      int cur = aRow[j], best = prev + (ca!=cb);
      if( aRow[j]+1<best ) best = aRow[j]+1;
      if( aRow[j-1]+1<best ) best = aRow[j-1]+1;
      aRow[j] = best;
      prev = cur;
    }
  }
  return aRow[nb];
}

/* Say on stderr that no op of trace id is named zTarget, with the three
** closest names of its hot ops and gaps (a name containing the target, or
** contained in it, first; then by edit distance). */
static void noSuchOp(sqlite3_int64 id, const char *zTarget){
  sqlite3_stmt *p = 0;
  char *azBest[3] = {0, 0, 0};
  int aScore[3] = {0, 0, 0}, k;
  Buf b;
  if( sqlite3_prepare_v2(g_db, "SELECT name FROM main.profsum_hot_ops WHERE trace_id=?1 UNION "
                         "SELECT name FROM main.profsum_gaps WHERE trace_id=?1", -1, &p, 0)==SQLITE_OK ){
    sqlite3_bind_int64(p, 1, id);
    while( sqlite3_step(p)==SQLITE_ROW ){
      const char *z = (const char*)sqlite3_column_text(p, 0);
      int d;
      if( z==0 ) continue;
      d = nameDistance(zTarget, z);
      if( strstr(z, zTarget) || strstr(zTarget, z) ) d -= 1000;
      for(k=0; k<3; k++){
        if( azBest[k]==0 || d<aScore[k] ){
          int m;
          free(azBest[2]);
          for(m=2; m>k; m--){ azBest[m] = azBest[m-1]; aScore[m] = aScore[m-1]; }
          azBest[k] = xstrdup(z); aScore[k] = d;
          break;
        }
      }
    }
  }
  sqlite3_finalize(p);
  memset(&b, 0, sizeof(b));
  for(k=0; k<3 && azBest[k]; k++){
    bufPuts(&b, k ? ", " : "");
    bufPuts(&b, azBest[k]);
    free(azBest[k]);
  }
  errLine("profsum query: note: no op named '%s' in this profile; closest: %s", zTarget,
          b.z ? b.z : "(the profile has no op names)");
  free(b.z);
}

/* The notes on stderr for the answer zAns to question zQ about trace id:
** a question no intent matched (the answer on stdout is then the
** reference's fallback), and an op name the profile does not have. */
static void queryNotes(sqlite3_int64 id, const char *zQ, const char *zAns){
  int bAsked = 1;
  char *zType, *zTarget, *zMiss;
  if( profsumQueryKind(zQ, -1, &bAsked)==0 ) fail(EXIT_FAIL, "out of memory");
  if( !bAsked ){
    errLine("profsum query: note: the question matched none of the questions profsum "
            "understands, so the answer is the reference's fallback (its optimization candidates). "
            "It answers: top ops, compute vs communication, collective breakdown, the gap before "
            "an op, the context of an op's gaps, hierarchical regions (profsum query --list). "
            "Anything else is SQL: profsum sql DB \"SELECT * FROM profsum_advice\" "
            "(or profsum_kpis, profsum_hot_ops, profsum_step_wall, trace_events)");
  }
  zType = sqlText("SELECT json_extract(?1, '$.query_type')", "t", zAns);
  zTarget = sqlText("SELECT json_extract(?1, '$.target')", "t", zAns);
  zMiss = sqlText("SELECT CASE json_extract(?1, '$.query_type') "
                  "WHEN 'pre_op_gap' THEN json_type(?1, '$.match') = 'null' "
                  "AND json_array_length(?1, '$.context') = 0 "
                  "WHEN 'gap_region_context' THEN json_array_length(?1, '$.results') = 0 END", "t", zAns);
  if( zTarget && zTarget[0] && zMiss && strcmp(zMiss, "1")==0 ) noSuchOp(id, zTarget);
  free(zType);
  free(zTarget);
  free(zMiss);
}

/* Say on stderr when trace id's export looks capped (diagnostic
** capped_export), so that a user reading only the summary knows that its
** later steps are missing. */
static void cappedNote(sqlite3_int64 id){
  char *z = 0, *zErr = 0;
  if( tableExists("profsum_agg_diagnostic") ){
    z = sqlTextTry(&zErr, "SELECT detail FROM main.profsum_agg_diagnostic WHERE trace_id=?1 "
                   "AND kind='capped_export' LIMIT 1", "i", id);
  }
  if( z ) errLine("profsum %s: warning: %s", g_zCmd, z);
  free(z);
  free(zErr);
}

/* profsum query: the JSON answer to --question about --summary (or
** --trace in --db), profsum_query_json; --list prints the kinds of
** questions understood instead. */
int cmdQuery(Opts *o){
  long long k = optInt(o, "top-k", 10);    /* any int: a slice bound */
  const char *zQ = optStr(o, "question");
  char *zOpts, *zAns;
  sqlite3_int64 id;
  failOutputOver(optStr(o, "output"), optStr(o, "db"), "--db", 1);
  failOutputOverInput(optStr(o, "output"), optStr(o, "summary"), "--summary");
  failOutputUnwritable(optStr(o, "output"));
  if( optFlag(o, "list") ){
    size_t i;
    Buf b;
    memset(&b, 0, sizeof(b));
    bufPuts(&b, "Questions are matched by substrings of the lower-cased question (\"stop\" contains \"top\"\n"
                "and \"op\"), in this order: the first that applies answers. The number of rows is\n"
                "--top-k (default 10), not a number in the question.\n");
    for(i=0; i<sizeof(aIntent)/sizeof(aIntent[0]); i++){
      char z[600];
      snprintf(z, sizeof(z), "\n%d. %s\n   when the question %s\n   e.g. profsum query --summary S --question \"%s\"\n",
               (int)i+1, aIntent[i].zType, aIntent[i].zWhen, aIntent[i].zExample);
      bufPuts(&b, z);
    }
    bufPuts(&b, "\nThe answer is JSON with \"query_type\" and the rows (tools-spec section 2).");
    emit(b.z, optStr(o, "output"));
    free(b.z);
    return EXIT_OK;
  }
  if( zQ==0 ) fail(EXIT_USAGE, "the option '--question' is required (or --list)");
  zOpts = knobOptions(o, 0, 0);
  failBeforeDb(o);
  openDb(optStr(o, "db"), "--db");
  id = summaryArg(o, zOpts);
  zAns = sqlText(optFlag(o, "advice") ? "SELECT profsum_query_json(?1, ?2, ?3, '{\"advice\": true}')"
                 : "SELECT profsum_query_json(?1, ?2, ?3)", "iti", id, zQ, (sqlite3_int64)k);
  if( zAns==0 ) fail(EXIT_FAIL, "profsum_query_json returned nothing");
  cappedNote(id);
  queryNotes(id, zQ, zAns);
  emit(zAns, optStr(o, "output"));
  free(zAns);
  free(zOpts);
  return EXIT_OK;
}
