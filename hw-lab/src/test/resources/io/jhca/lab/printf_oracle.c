/*
 * Oracle for hwlab's output formats: prints with the C library's printf, using the format strings of
 * perftest v4.5-0.17 ("6.06": src/perftest_communication.h, src/perftest_parameters.h) and of rdma-core
 * (libibverbs/examples/rc_pingpong.c, device_list.c, devinfo.c). One request per stdin line:
 * a mode word and its arguments; one output line per request. Doubles arrive as C99 hex floats ("%a"),
 * so they are exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

/* perftest_communication.h */
#define KEY_PRINT_FMT "%04x:%04x:%06x:%06x:%08x:%016llx:%08x"
#define KEY_PRINT_FMT_GID "%04x:%04x:%06x:%06x:%08x:%016llx:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%08x:"
#define BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x"
#define READ_FMT " OUT %#04x"
#define RDMA_FMT " RKey %#08x VAddr %#016llx"
#define PERF_GID_FMT " %s: %02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d"
/* perftest_parameters.h */
#define REPORT_FMT " %-7lu    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf"
#define REPORT_FMT_EXT " %-7lu    %" PRIu64 "           %-7.6lf            %-7.6lf            %-7.6lf"
#define REPORT_FMT_LAT " %-7lu %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
#define REPORT_FMT_LAT_DUR " %-7lu       %" PRIu64 "            %-7.2f        %-7.2f"

static unsigned long long u(const char *s) { return strtoull(s, NULL, 0); }
static double d(const char *s) { return strtod(s, NULL); }

int main(void)
{
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		char *a[40];
		int n = 0;
		for (char *t = strtok(line, " \n"); t && n < 40; t = strtok(NULL, " \n"))
			a[n++] = t;
		if (n == 0)
			continue;
		if (!strcmp(a[0], "key")) {
			printf(KEY_PRINT_FMT_GID, (unsigned)u(a[1]), (unsigned)u(a[2]), (unsigned)u(a[3]), (unsigned)u(a[4]),
			       (unsigned)u(a[5]), u(a[6]), (unsigned)u(a[7]), (unsigned)u(a[8]), (unsigned)u(a[9]),
			       (unsigned)u(a[10]), (unsigned)u(a[11]), (unsigned)u(a[12]), (unsigned)u(a[13]), (unsigned)u(a[14]),
			       (unsigned)u(a[15]), (unsigned)u(a[16]), (unsigned)u(a[17]), (unsigned)u(a[18]), (unsigned)u(a[19]),
			       (unsigned)u(a[20]), (unsigned)u(a[21]), (unsigned)u(a[22]), (unsigned)u(a[23]));
		} else if (!strcmp(a[0], "keyn")) {
			printf(KEY_PRINT_FMT, (unsigned)u(a[1]), (unsigned)u(a[2]), (unsigned)u(a[3]), (unsigned)u(a[4]),
			       (unsigned)u(a[5]), u(a[6]), (unsigned)u(a[7]));
		} else if (!strcmp(a[0], "addr")) { /* side verb lid qpn psn out rkey vaddr */
			int verb = (int)u(a[2]);
			printf(BASIC_ADDR_FMT, a[1], (unsigned)u(a[3]), (unsigned)u(a[4]), (unsigned)u(a[5]));
			switch (verb) { /* ctx_print_pingpong_data: READ (2) falls through to RDMA (1) */
			case 2: printf(READ_FMT, (unsigned)u(a[6])); /* fall through */
			case 1: printf(RDMA_FMT, (unsigned)u(a[7]), u(a[8]));
			default: ;
			}
		} else if (!strcmp(a[0], "gid")) {
			printf(PERF_GID_FMT, "GID", (int)u(a[1]), (int)u(a[2]), (int)u(a[3]), (int)u(a[4]), (int)u(a[5]),
			       (int)u(a[6]), (int)u(a[7]), (int)u(a[8]), (int)u(a[9]), (int)u(a[10]), (int)u(a[11]),
			       (int)u(a[12]), (int)u(a[13]), (int)u(a[14]), (int)u(a[15]), (int)u(a[16]));
		} else if (!strcmp(a[0], "lat")) {
			printf(REPORT_FMT_LAT, (unsigned long)u(a[1]), (uint64_t)u(a[2]), d(a[3]), d(a[4]), d(a[5]), d(a[6]),
			       d(a[7]), d(a[8]), d(a[9]));
		} else if (!strcmp(a[0], "latdur")) {
			printf(REPORT_FMT_LAT_DUR, (unsigned long)u(a[1]), (uint64_t)u(a[2]), d(a[3]), d(a[4]));
		} else if (!strcmp(a[0], "bw")) {
			printf(REPORT_FMT, (unsigned long)u(a[1]), (uint64_t)u(a[2]), d(a[3]), d(a[4]), d(a[5]));
		} else if (!strcmp(a[0], "bwext")) {
			printf(REPORT_FMT_EXT, (unsigned long)u(a[1]), (uint64_t)u(a[2]), d(a[3]), d(a[4]), d(a[5]));
		} else if (!strcmp(a[0], "rcpp")) { /* size iters micros: rc_pingpong.c's float arithmetic */
			int size = (int)u(a[1]), iters = (int)u(a[2]);
			float usec = (float)u(a[3]);
			long long bytes = (long long)size * iters * 2;
			printf("%lld bytes in %.2f seconds = %.2f Mbit/sec|", bytes, usec / 1000000., bytes * 8. / usec);
			printf("%d iters in %.2f seconds = %.2f usec/iter", iters, usec / 1000000., usec / iters);
		} else if (!strcmp(a[0], "ppaddr")) { /* side lid qpn psn gidtext */
			printf("  %s address: %sLID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", a[1], strcmp(a[1], "local") ? "" : " ",
			       (unsigned)u(a[2]), (unsigned)u(a[3]), (unsigned)u(a[4]), a[5]);
		} else if (!strcmp(a[0], "ppmsg")) { /* lid qpn psn gid32hex */
			printf("%04x:%06x:%06x:%s", (unsigned)u(a[1]), (unsigned)u(a[2]), (unsigned)u(a[3]), a[4]);
		} else if (!strcmp(a[0], "guid")) { /* devinfo.c guid_str */
			uint64_t g = u(a[1]);
			printf("%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff, (unsigned)(g >> 32) & 0xffff,
			       (unsigned)(g >> 16) & 0xffff, (unsigned)(g >> 0) & 0xffff);
		} else if (!strcmp(a[0], "dev")) { /* device_list.c */
			printf("    %-16s\t%016llx", a[1], u(a[2]));
		} else {
			printf("?%s", a[0]);
		}
		printf("\n");
	}
	return 0;
}
