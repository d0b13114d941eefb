/*
 * Just enough kernel vocabulary to compile the kernel's <linux/mlx5/mlx5_ifc.h> and <linux/mlx5/device.h> in a
 * user-space test program (jhca golden tests). __be16/32/64 come from the installed <linux/types.h>.
 */
#ifndef JHCA_KSHIM_H
#define JHCA_KSHIM_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <endian.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define BIT(n) (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#define __force
#define __iomem
#define __packed __attribute__((packed))
#define BUILD_BUG_ON(cond) ((void)sizeof(char[1 - 2 * !!(cond)]))
#define cpu_to_be16 htobe16
#define cpu_to_be32 htobe32
#define cpu_to_be64 htobe64
#define be16_to_cpu be16toh
#define be32_to_cpu be32toh
#define be64_to_cpu be64toh
#ifndef PAGE_SIZE
#define PAGE_SIZE 4096
#endif
#endif
