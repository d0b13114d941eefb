/*
 * How the baselines' own main times a loop: ITERS operations in blocks of BLOCK, after a tenth as many to warm up;
 * the reported time is the median block's, so preemption by other work on a shared machine (which hits a few
 * blocks, not the median one) stays out of the number; the mean is reported too.
 */
#ifndef JHCA_BLOCK_TIMING_H
#define JHCA_BLOCK_TIMING_H

#include <stdlib.h>

#define BLOCK 1000

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* RUN(ops) runs ops operations and returns their time in ns, or < 0 on failure. Returns 0, or -1 if RUN failed. */
static int time_blocks(double (*run)(long), long iters, double *median_ns_per_op, double *mean_ns_per_op) {
    for (int phase = 0; phase < 2; phase++) { /* phase 0 warms up, phase 1 is timed */
        long blocks = (phase == 0 ? iters / 10 : iters) / BLOCK;
        if (blocks < 1) blocks = 1;
        double *t = malloc(sizeof(double) * blocks);
        double total = 0;
        for (long i = 0; i < blocks; i++) {
            t[i] = run(BLOCK);
            if (t[i] < 0) { free(t); return -1; }
            total += t[i];
        }
        qsort(t, blocks, sizeof(double), cmp_double);
        *median_ns_per_op = t[blocks / 2] / BLOCK;
        *mean_ns_per_op = total / (blocks * (double) BLOCK);
        free(t);
    }
    return 0;
}

#endif
