/*
** demote.c — hand a buffer one thread wrote to the thread that reads it next.
**
** A thread that fills a buffer on one core leaves its cache lines modified
** in that core's private cache.  When a thread on the other core reads
** the buffer, every line is fetched from the writer's cache by a snoop,
** which costs more than a read from the shared last-level cache: on the
** machines profsum is measured on, reading the inflate thread's output
** cost the JSON scanner about a tenth of its time, whether it copied the
** bytes (memcpy) or tokenized them in place (docs/performance-log.md,
** "Cache lines handed over").  CLDEMOTE (x86, from Sapphire Rapids on)
** asks the core to move a line to the shared cache; the writer issues it
** for each line once the buffer is full, before it hands the buffer over.
**
** It is a hint only: the bytes do not change, and a processor without
** CLDEMOTE executes the instruction, which lies in the reserved NOP
** opcode space, as a NOP.  Other architectures: nothing.
*/
#include "profsum_int.h"

/* See profsum_int.h. */
void profsumCacheDemote(const void *p, size_t n){
#if defined(__x86_64__) || defined(__i386__)
  const unsigned char *a = (const unsigned char*)((uintptr_t)p & ~(uintptr_t)63);
  const unsigned char *e = (const unsigned char*)p + n;
  for(; a<e; a+=64) __asm__ volatile("cldemote %0" :: "m"(*a));
#else
  (void)p; (void)n;
#endif
}
