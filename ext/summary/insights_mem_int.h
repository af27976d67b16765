/*
** insights_mem_int.h — the parts of the InsMem collector (insights_mem.c:
** memory allocations; insights_mem_torch.c: PyTorch's memory events;
** insights_mem_kern.c: GPU kernels and their kernel_details;
** insights_mem_report.c: report sections) and what they share
** (insights_mem_util.c): the statements of the write, a parser of integer
** text, and a reader of the top-level keys of a JSON object (trace JSON
** args).  The
** collector's diagnostics are an InsDiag (insights_int.h).  Not included
** outside insights_mem*.c.
*/
#ifndef PROFSUM_INSIGHTS_MEM_INT_H
#define PROFSUM_INSIGHTS_MEM_INT_H

#include "insights_int.h"
#include <string.h>

/* ---------------------------------------------------------------------
** The statements of the write. */

/* The statement zFmt (%w: the schema zSchema) prepared in *pp, or an error
** code with *pzErr set (prefixed with zFunc). */
int memPrepare(sqlite3 *db, const char *zFunc, char **pzErr, sqlite3_stmt **pp,
               const char *zFmt, const char *zSchema);
/* Step insert p, then reset it: SQLITE_OK, or an error code with *pzErr
** set (when not set already). */
int memStep(sqlite3 *db, sqlite3_stmt *p, const char *zFunc, char **pzErr);

/* ---------------------------------------------------------------------
** Top-level members of a JSON object (the raw text of trace JSON args):
** xMember is called for each with the key's raw text (escapes not
** decoded: the keys looked for have none) and the value's raw text
** (strings without their quotes, bIsStr 1).  Malformed text ends the
** walk quietly (the scanner already reported it).  xMember returns
** nonzero to stop. */
typedef int (*MemJsonMemberFn)(void *pCtx, const char *zKey, int64_t nKey,
                               const char *zVal, int64_t nVal, int bIsStr);
void memJsonMembers(const char *z, int64_t n, MemJsonMemberFn xMember, void *pCtx);
/* The decoded text of JSON string body z[0..n) (escapes resolved; an
** invalid \u escape or a lone surrogate becomes U+FFFD) into *pzOut
** (sqlite3_malloc'd, NUL-terminated, length *pnOut).  SQLITE_OK or
** SQLITE_NOMEM. */
int memJsonUnescape(const char *z, int64_t n, char **pzOut, int64_t *pnOut);

/* 1 when z[0..n) is a JSON number (RFC 8259 grammar), else 0. */
int memIsJsonNumber(const char *z, int64_t n);

/* ---------------------------------------------------------------------
** Memory events as the readers hand them over (insights_mem.c takes them;
** insights_mem_torch.c reads PyTorch's). */

/* A number as read from a stat or an arg. */
#define MV_ABSENT 0
#define MV_OK     1
#define MV_BAD    2          /* present but not a non-negative integer */

/* A text field as read (not NUL-terminated). */
typedef struct MemTxt { const char *z; int64_t n; int isNum; int present; } MemTxt;

/* One memory event, from an XPlane event or a JSON entry. */
typedef struct MemIn {
  int isAlloc;
  profsum_ps ts;
  int64_t idx, off;
  const char *zAllocator; int64_t nAllocator;
  int idKind;             /* what names the allocator: the last of
                          ** allocator_name (1), index_on_host or
                          ** device_ordinal (2) in stat order; 0: none */
  int64_t devIdx;         /* the index (idKind 2) */
  int eInUse, eLife, eBytes, eReq, eAddr, eRes, eAvail;
  int64_t inUse, life, bytes, req, res, avail;
  uint64_t addr;
  MemTxt tfop, region, dtype, shape;
  char *azOwn[16]; int nOwn;  /* copies of the decoder's scratch text */
  /* a PyTorch [memory] event (insights_mem_torch.c): its allocator is
  ** named by zAllocator (idKind 1), iGpu is the GPU index it names (-1:
  ** none), res its 'Total Reserved' (eRes), and no capacity is stated */
  int torch;
  int iGpu;
  int oom;                /* PyTorch's [OutOfMemory]: a failed allocation
                          ** of 'Bytes' (eBytes) */
  int noTs;               /* (oom) the event has no time */
} MemIn;

/* Take memory event m: checked (a diagnostic when it cannot be used),
** counted, kept for the write.  SQLITE_OK or SQLITE_NOMEM. */
int memTake(InsMem *p, MemIn *m);
/* The device named z[0..n) (added when new, its memory_size 0), its
** memory_size set to memSize when it has none yet and memSize > 0.  Its
** index in the collector's devices, or -1 on SQLITE_NOMEM. */
int memDevice(InsMem *p, const char *z, int64_t n, int64_t memSize);
/* Parse decimal text z[0..n) (optional sign, digits; a float with an
** integral value is accepted) into *pv as int64: MV_OK, or MV_BAD. */
int memNumText(const char *z, int64_t n, int64_t *pv);
#define MEM_ABSURD_BYTES (((int64_t)1)<<50)  /* 1 PiB: no device holds it */
/* A byte count read with outcome e (MV_*): e unless it is MV_OK, else
** MV_OK when 0 <= v < MEM_ABSURD_BYTES, MV_BAD when not. */
int memByteCheck(int e, int64_t v);
/* An address z[0..n): up to 20 decimal digits read as uint64 into *pv,
** and with bSigned a leading '-' too (PyTorch writes a pointer as a
** signed integer: its 64 bits, so -1 is 0xffffffffffffffff).  MV_OK, or
** MV_BAD (*pv then unspecified). */
int memAddrText(const char *z, int64_t n, int bSigned, uint64_t *pv);
/* 1 when z[0..n) (z may be NULL) is the NUL-terminated zLit. */
static inline int memTextEq(const char *z, int64_t n, const char *zLit){
  return z && (int64_t)strlen(zLit)==n && memcmp(z, zLit, (size_t)n)==0;
}
/* N when allocator name z[0..n) is GPU_<N>_bfc (an N past 1,000,009: -1), else -1. */
int memGpuOfAllocator(const char *z, int64_t n);

/* PyTorch's memory events (insights_mem_torch.c): JSON entry ev, an
** instant event named "[memory]" or "[OutOfMemory]" (the caller checked;
** bOom: the latter), read as an allocation (Bytes >= 0), a deallocation
** (Bytes < 0) or a failed allocation of the allocator that 'Device Type'
** and 'Device Id' name.  SQLITE_OK or SQLITE_NOMEM. */
int memTorchEvent(InsMem *p, const ProfsumEvent *ev, int bOom);
/* The note of a PyTorch allocator's profsum_memory row: zNote (0: none)
** followed by what its figures count (bGpu: a GPU's caching allocator),
** the largest 'Total Reserved' (resPeak, when above 0) and its failed
** allocations (nOom, the earliest of oomBytes bytes, -1: not given or
** invalid, at oomUs µs, unknown with bNoTs).  sqlite3_malloc'd, 0 when out
** of memory; zNote is not freed. */
char *memTorchNote(const char *zNote, int bGpu, int64_t resPeak, int64_t nOom, int64_t oomBytes,
                   double oomUs, int bNoTs);

/* ---------------------------------------------------------------------
** Kernels (insights_mem_kern.c): one tally per trace, keyed by (kernel
** name, block, grid, registers, static and dynamic shared bytes, hlo_op). */
typedef struct MemKern MemKern;
int memKernNew(MemKern **pp);
void memKernFree(MemKern *p);
/* What names an XPlane kernel's texts within one plane, when its
** kernel_details (and hlo_op, if any) are references to stat metadata: its
** event metadata entry (which gives the name) and the two reference values
** (hlo UINT64_MAX: no hlo_op).  Within a plane the same values name the
** same texts, so memKernAdd finds their memo entry by these numbers
** instead of hashing and comparing the texts; memKernPlane starts a plane
** (entries of the plane before are not taken after it). */
typedef struct MemKernRef { int64_t iMeta; uint64_t det, hlo; } MemKernRef;
void memKernPlane(MemKern *p);
/* One kernel execution: name z[0..n), kernel_details text, hlo_op and
** hlo_module (0: absent), device key (plane index, or with bPid the pid
** of a trace JSON event, which counts only if a process_name names it a
** device: memKernProcess), duration ps; idx/off place its diagnostics;
** pRef (0: none) the references its texts came from, in the current
** plane.  The texts are read by their lengths (no NUL needed) and copied
** when a row keeps them.  SQLITE_OK or SQLITE_NOMEM. */
int memKernAdd(MemKern *p, InsDiag *pDiag,
               const char *zName, int64_t nName,
               const char *zDetails, int64_t nDetails,
               const char *zHlo, int64_t nHlo,
               const char *zModule, int64_t nModule,
               int64_t iDevice, int bPid, int64_t durPs, int64_t idx, int64_t off,
               const MemKernRef *pRef);
/* A trace JSON process_name of pid, naming a device (isDevice: it starts
** with "/device:") or not; a later one for the pid replaces it, wherever
** it stands in the file.  SQLITE_OK or SQLITE_NOMEM. */
int memKernProcess(MemKern *p, int64_t pid, int isDevice);
/* Insert the tally into profsum_agg_kernel for traceId: one row per row
** key over the devices, JSON kernels of processes that are no device
** (the host's launch events) left out. */
int memKernWrite(MemKern *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                 const char *zFunc, char **pzErr);

/* ---------------------------------------------------------------------
** Report sections (insights_mem_report.c): see insights.h. */
int memReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int memReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);

#endif /* PROFSUM_INSIGHTS_MEM_INT_H */
