/*
** profsum_int.h — declarations shared by the files of the profsum extension.
**
** Every .c file of the extension includes this header.  Only ext/profsum.c
** defines SQLITE_EXTENSION_INIT1 (the sqlite3_api pointer); all the others
** see it through SQLITE_EXTENSION_INIT3 below.
**
** Each concern lives in one file and exposes one registration function:
**   ext/gz.c          byte source: plain or gzip (multi-member) file, streamed
**   ext/trace_json.c  streaming Chrome Trace Event Format scanner
**   ext/track.c       per-track model: B/E pairing, nesting, exclusive time
**   ext/vtab_trace.c  trace_events() and profsum_diagnostics()
**   ext/sql/funcs_sql.c  pure SQL functions (classify_op, tf_region, ...)
**   ext/find.c        profsum_find_traces()
*/
#ifndef PROFSUM_INT_H
#define PROFSUM_INT_H

#include <sqlite3ext.h>
#ifndef SQLITE_CORE
SQLITE_EXTENSION_INIT3
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef PROFSUM_VERSION
# define PROFSUM_VERSION "0.0.0-dev"
#endif

/* Exact time in picoseconds.  Epoch-based µs timestamps times 10^6 do not
** fit in 64 bits, so absolute times are kept in 128 bits; durations and
** differences fit in int64 for any realistic trace.  The type is declared
** with 8-byte alignment: sqlite3_malloc() guarantees only 8, and structs
** holding a profsum_ps live in its memory. */
typedef __int128 profsum_ps __attribute__((aligned(8)));

/* Convert picoseconds to nanoseconds, rounding toward negative infinity
** (the contract: ts = floor(ps / 1000)). */
static inline int64_t profsumPsToNs(profsum_ps v){
  profsum_ps q = v / 1000;
  if( (v % 1000) < 0 ) q -= 1;
  return (int64_t)q;
}

/* Does v's nanosecond count, floor(v / 1000), fit in int64?  1 for v in
** [-2^63 * 1000, 2^63 * 1000): -2^63 ns itself fits, -2^63 ns minus 1 ps
** does not, nor 2^63 ns. */
static inline int profsumPsNsFits(profsum_ps v){
  return v >= (profsum_ps)INT64_MIN*1000 && v < ((profsum_ps)INT64_MAX+1)*1000;
}

/* Advise the kernel that the whole pages inside [p, p+n) are about to be
** written, so that it maps them in one call instead of one page fault
** each (ext/prefault.c: Linux's MADV_POPULATE_WRITE; elsewhere, or on an
** older kernel, nothing).  The bytes are not changed; errors are ignored.
** Callers prefault only memory they are about to write in full. */
void profsumPrefault(void *p, size_t n);

/* The CPUs this process may keep busy at once, at least 1: its affinity
** mask's (where the mask cannot be had, the CPUs online), and no more than
** its cgroup's CPU quota allows, rounded up (ext/util/cpus.c: cgroup v2's
** cpu.max or v1's cpu.cfs_quota_us, the smallest over the cgroup and its
** ancestors).  PROFSUM_CGROUP_ROOT=DIR reads DIR/self_cgroup and DIR/fs
** instead of /proc/self/cgroup and /sys/fs/cgroup (for tests). */
int profsumCpusUsable(void);

/* Ask the CPU to move the cache lines of [p, p+n), which this thread just
** wrote, to the cache its cores share, for a thread on another core that
** reads them next (ext/util/demote.c: x86's CLDEMOTE; a NOP on a CPU
** without it, and elsewhere nothing).  A hint: the bytes do not change. */
void profsumCacheDemote(const void *p, size_t n);

/* Ask the CPU for the cache line at address a, to be written soon, so that
** the line's transfer overlaps the work before the write instead of
** stalling it: a line another core holds (a ring that the other thread
** reads), or one fresh from memory.  a may lie past the end of its array
** (only an address is formed, and a prefetch never faults).  x86-64:
** PREFETCHW, which the CPUs without it decode as a no-op; elsewhere the
** compiler's prefetch for a write.  See docs/performance-log.md, "Lines
** another core holds". */
/* The first 64-byte boundary at or after p: an array of cache lines in an
** allocation of 64 bytes more than it needs (the allocator aligns less). */
static inline void *profsumAlign64(void *p){
  return (void*)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

static inline void profsumPrefetchW(uintptr_t a){
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __asm__ volatile("prefetchw (%0)" : : "r"(a));
#else
  __builtin_prefetch((const void*)a, 1);
#endif
}

/* ---------------------------------------------------------------------
** Registration entry points (one per file).  Each returns SQLITE_OK or an
** SQLite error code; on error *pzErr may be set (sqlite3_malloc'd).
*/
int profsumRegisterTraceVtab(sqlite3 *db, char **pzErr);   /* vtab_trace.c */
int profsumRegisterXplane(sqlite3 *db, char **pzErr);      /* vtab_xplane.c */
int profsumRegisterFuncs(sqlite3 *db, char **pzErr);       /* sql/funcs_sql.c */
int profsumRegisterFind(sqlite3 *db, char **pzErr);        /* find.c */
int profsumRegisterImport(sqlite3 *db, char **pzErr);      /* import.c */

/* A source of profsum_import that is not a path (a W&B reference): how to
** recognise it and fetch it into a local folder.  The network layer's
** functions are handed to the import (a lower layer) at registration by
** ext/sql/profsum.c; without them every source is a path. */
typedef struct ProfsumRemoteSource {
  int (*xIsSource)(const char *zSource);
  int (*xFetch)(sqlite3 *db, const char *zSource, const char *zAlias,
                char **pzLocalDir, char **pzRunMetadataJson, char **pzErr);
} ProfsumRemoteSource;
void profsumImportSetRemote(const ProfsumRemoteSource *p);  /* import.c */
int profsumRegisterCatalog(sqlite3 *db, char **pzErr);     /* catalog.c */
int profsumRegisterTrim(sqlite3 *db, char **pzErr);        /* trim.c */
int profsumRegisterReportHtml(sqlite3 *db, char **pzErr);  /* report_html.c */
int profsumRegisterSummaryDoc(sqlite3 *db, char **pzErr);  /* summary_doc.c */
int profsumRegisterCompare(sqlite3 *db, char **pzErr);     /* history/pair.c */
int profsumRegisterQuery(sqlite3 *db, char **pzErr);       /* query.c */
int profsumRegisterSchema(sqlite3 *db, char **pzErr);      /* schema.c */

/* The label profsum_import gives a source by default: the folder name, or
** the file name without its trace suffixes (sqlite3_malloc'd; import.c). */
char *profsumDefaultLabel(const char *zSource);

/* For the CLI, where a file is given as a summary (report/query/publish
** --summary, compare/track/bundle --before/--after): NULL when zPath is a
** profile_summary.v1 summary, a trace, or a file whose problem the import
** will name; else the message that rejects it (sqlite3_malloc'd):
** "Expected JSON object in summary '<path>'." for a top-level value that
** is not an object (nor an array of trace events), or a message naming
** what the object lacks (import.c). */
char *profsumSummaryFileProblem(const char *zPath);

/* Create the profsum tables and views (sql/schema.sql and views/, all IF
** NOT EXISTS, compiled in) in schema zSchema, or bring those a database
** holds from another profsum up to this one's (schema.c: views dropped and
** created again, missing columns added, profsum_meta written).  Runs in
** the caller's transaction.  On error *pzErr gets a message without a
** function prefix. */
int profsumCreateSchema(sqlite3 *db, const char *zSchema, char **pzErr);
/* 1 when zSchema holds every profsum object and profsum_meta names this
** profsum's schema (nothing for profsumCreateSchema to do), else 0. */
int profsumSchemaCurrent(sqlite3 *db, const char *zSchema);
/* Is zSchema the name of a database of db ("main", "temp" or an attached
** one, in any case)?  1 or 0.  "temp" always is: SQLite opens it when it
** is first used, and sqlite3_db_filename() gives NULL for it before. */
static inline int profsumSchemaAttached(sqlite3 *db, const char *zSchema){
  return sqlite3_db_filename(db, zSchema)!=0 || sqlite3_stricmp(zSchema, "temp")==0;
}
/* Does table zTable exist in schema zSchema?  1/0, or -1 on an error (no
** such schema, out of memory) with *pRc set (import.c). */
int profsumTableExists(sqlite3 *db, const char *zSchema, const char *zTable, int *pRc);

/* ---------------------------------------------------------------------
** Error helpers (profsum.c).
**
** profsumCtxErr(): format a message with sqlite3_vmprintf, report it with
**   sqlite3_result_error(), free it.  Out of memory → result_error_nomem.
** profsumCtxErrV(): the same with a va_list; returns SQLITE_OK, or
**   SQLITE_NOMEM when the message could not be made.
** profsumVtabErr(): replace pVtab->zErrMsg with the formatted message.
** profsumErrSetV(): replace *pzErr with "<zFunc>: '<zPath>': <message>"
**   ("<zFunc>: <message>" when zPath is 0), the message formatted from
**   zFmt and ap; 0 when out of memory.
*/
void profsumCtxErr(sqlite3_context *ctx, const char *zFmt, ...);
int profsumCtxErrV(sqlite3_context *ctx, const char *zFmt, va_list ap);
void profsumVtabErr(sqlite3_vtab *pVtab, const char *zFmt, ...);
void profsumErrSetV(char **pzErr, const char *zFunc, const char *zPath, const char *zFmt,
                    va_list ap);

/* 1 when the text of v holds a NUL byte before its end: a path the C
** library would read cut short there (another file than the one given),
** which every function that takes a path refuses; else 0. */
static inline int profsumValueHasNul(sqlite3_value *v){
  const char *z = (const char*)sqlite3_value_text(v);
  return z!=0 && (int)strlen(z)!=sqlite3_value_bytes(v);
}

/* Reading rows without losing any to an error (profsum.c).
**
** profsumFinishRows(): finalize p after a loop of sqlite3_step(p) ==
**   SQLITE_ROW that ended with rc (SQLITE_OK, or an error of the loop's
**   own); returns the loop's error, else the step's (an interrupt, out of
**   memory, ... that ended the rows early), and for such a step error other
**   than SQLITE_NOMEM sets *pzErr (if pzErr and *pzErr are not 0) to
**   SQLite's message.
** profsumColText(): the text of column i of p, or 0; 0 for a non-NULL
**   value (the text could not be made: out of memory) also sets *pRc to
**   SQLITE_NOMEM. */
int profsumFinishRows(sqlite3 *db, sqlite3_stmt *p, int rc, char **pzErr);
const char *profsumColText(sqlite3_stmt *p, int i, int *pRc);

/* Interrupts (profsum.c).  SQLite 3.40 has no sqlite3_is_interrupted(),
** but while a statement of a connection runs, the flag sqlite3_interrupt()
** sets stays set, and any statement stepped on that connection meanwhile
** fails with SQLITE_INTERRUPT at once: a probe steps a prepared "SELECT 1"
** to ask (a few microseconds).
**
** profsumInterrupted(): 1 when pProbe's connection was interrupted, else 0
**   (also when the statement could not be prepared for another reason).
**   A stop check for profsumStopPush (profsum_reader.h).  Call it from
**   the connection's own thread, while a statement of it runs (a
**   function's or a virtual table's call).  Prepares the statement at its
**   first call.
** profsumProbeDone(): finalize the probe's statement (it stays usable). */
typedef struct ProfsumProbe {
  sqlite3 *db;                  /* the connection to watch */
  sqlite3_stmt *pStmt;          /* "SELECT 1", or 0 before the first probe */
} ProfsumProbe;
int profsumInterrupted(void *pProbe);
void profsumProbeDone(ProfsumProbe *p);

/* Result codes for failures of files that are not the database.  SQLite
** reacts to two codes as failures of the database itself, whoever returns
** them: a statement that ends with plain SQLITE_CORRUPT inside a
** transaction makes every later write of it fail ("database disk image is
** malformed", COMMIT included), and one that reads the database (a query
** of trace_events, SELECT profsum_import(path) FROM a table) and ends with
** SQLITE_IOERR rolls the caller's whole transaction back.  A bad trace in a
** batch of imports inside the user's BEGIN would cost the whole batch, so:
**   PROFSUM_RC_DAMAGED  damaged gzip (corrupt, truncated, trailing garbage):
**                       SQLITE_CORRUPT_VTAB, primary code still 11 (what
**                       sqlite3_errcode() and the shell report)
**   PROFSUM_RC_FILEIO   a failed read or write of a trace, a summary file,
**                       a bundle or an export: SQLITE_ERROR, the file and
**                       the system's reason in the message */
#define PROFSUM_RC_DAMAGED SQLITE_CORRUPT_VTAB
#define PROFSUM_RC_FILEIO  SQLITE_ERROR

/* sqlite3_malloc64(n) with its n bytes zeroed; 0 when out of memory. */
static inline void *profsumMallocZero(sqlite3_uint64 n){
  void *p = sqlite3_malloc64(n);
  if( p ) memset(p, 0, (size_t)n);
  return p;
}

/* Python-exact float formatting: profsumPyFormat, profsumStrAppendPy. */
#include "pyformat.h"

#endif /* PROFSUM_INT_H */
