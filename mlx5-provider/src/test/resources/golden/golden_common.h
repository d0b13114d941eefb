/*
 * Shared helpers of the jhca golden-vector programs: a seeded generator that favours edge values,
 * and hex printing. Every program prints one vector per line: a kind, the inputs, then the bytes the
 * mlx5dv.h helpers / struct layouts produce, all as hex tokens, so the Java side needs no generator.
 */
#ifndef JHCA_GOLDEN_COMMON_H
#define JHCA_GOLDEN_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t golden_state;

/* splitmix64 */
static uint64_t golden_next(void)
{
	uint64_t z = (golden_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A value of the given bit width: often an edge (0, 1, max, max-1, top bit, top bit - 1), else random. */
static uint64_t pick(int bits)
{
	uint64_t mask = bits >= 64 ? ~0ULL : ((1ULL << bits) - 1);
	switch (golden_next() % 10) {
	case 0: return 0;
	case 1: return mask;
	case 2: return 1 & mask;
	case 3: return (mask - 1) & mask;
	case 4: return (1ULL << (bits - 1)) & mask;
	case 5: return ((1ULL << (bits - 1)) - 1) & mask;
	default: return golden_next() & mask;
	}
}

/* Value in [0, n). */
static __attribute__((unused)) uint32_t below(uint32_t n)
{
	return (uint32_t)(golden_next() % n);
}

static void print_hex(const void *p, size_t n)
{
	const unsigned char *b = p;
	putchar(' ');
	if (n == 0)
		putchar('-');
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
}

static void golden_args(int argc, char **argv, unsigned long *count)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s SEED COUNT\n", argv[0]);
		exit(2);
	}
	golden_state = strtoull(argv[1], NULL, 0);
	*count = strtoul(argv[2], NULL, 0);
}

#define LAYOUT(s, f) \
	printf("layout %s %s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define SIZE(s) printf("size %s %zu\n", #s, sizeof(struct s))

#endif
