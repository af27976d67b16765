/*
** prefault.c — ask the kernel for the pages of a buffer before it is written.
**
** Every page a process writes for the first time costs a page fault: a trap
** into the kernel, a zeroed page, and on a virtual machine whose host backs
** the guest's memory lazily, the host's work too: on the virtual machines
** profsum is benchmarked on, a visible part of a large import's wall time
** (bench/README.md, "Fresh pages"; figures in docs/performance.md).
** madvise(MADV_POPULATE_WRITE) (Linux 5.14) maps a whole range in one call,
** as if each page had been written, without the trap per page, at a
** fraction of the cost (bench/measure.c -p, and the loop below).
**
** It is advice only: the bytes of the range are not changed, the pages
** would have been touched anyway (callers prefault only what they are
** about to write), and any error — an older kernel (EINVAL), a sandbox
** that filters the call (EPERM, ENOSYS), a range that cannot be populated —
** leaves the pages to be faulted one by one, as without this call.  After
** the first of those three no further call is made.
*/
#include "profsum_int.h"

#if defined(__linux__)
# include <sys/mman.h>
# include <unistd.h>
# include <errno.h>
# ifndef MADV_POPULATE_WRITE
#  define MADV_POPULATE_WRITE 23   /* Linux 5.14's value; C libraries before glibc 2.35 lack it */
# endif
#endif

/* 1 once the kernel has said it will not take the advice.  Read and
** written atomically: the parse, inflate and connection threads call
** profsumPrefault at once. */
static int prefaultUnsupported = 0;

/* See profsum_int.h. */
void profsumPrefault(void *p, size_t n){
#if defined(__linux__)
  static uintptr_t pageMaskShared = 0;     /* page size - 1, once known */
  uintptr_t a, b, pageMask;
  if( p==0 || n==0 || __atomic_load_n(&prefaultUnsupported, __ATOMIC_RELAXED) ) return;
  pageMask = __atomic_load_n(&pageMaskShared, __ATOMIC_RELAXED);
  if( pageMask==0 ){
    long ps = sysconf(_SC_PAGESIZE);
    pageMask = (uintptr_t)(ps>0 ? ps : 4096) - 1;
    /* every thread computes the same value */
    __atomic_store_n(&pageMaskShared, pageMask, __ATOMIC_RELAXED);
  }
  /* only whole pages inside [p, p+n): never a neighbour's bytes */
  a = ((uintptr_t)p + pageMask) & ~pageMask;
  b = ((uintptr_t)p + n) & ~pageMask;
  if( b<=a ) return;
  if( madvise((void*)a, (size_t)(b - a), MADV_POPULATE_WRITE)!=0
   && (errno==EINVAL || errno==EPERM || errno==ENOSYS) ){
    /* an older kernel (EINVAL), or a sandbox that filters the call */
    __atomic_store_n(&prefaultUnsupported, 1, __ATOMIC_RELAXED);
  }
#else
  (void)p; (void)n; (void)prefaultUnsupported;
#endif
}
