package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native layouts and constants {@link Recvmmsg} and {@link Sendmmsg} write and read, against the C library's own headers compiled
 * with gcc (sys/socket.h, sys/uio.h, netinet/in.h, linux/udp.h): struct mmsghdr and msghdr offsets, struct iovec's
 * size, the sockaddr_in/_in6 fields they decode and encode, struct cmsghdr and the UDP_SEGMENT / UDP_GRO cmsgs,
 * MSG_DONTWAIT and the address families.
 */
class RecvmmsgLayoutGoldenTest {

    private static final String PROGRAM = String.join("\n",
            "#define _GNU_SOURCE",
            "#include <stdio.h>",
            "#include <stddef.h>",
            "#include <sys/socket.h>",
            "#include <sys/uio.h>",
            "#include <netinet/in.h>",
            "#include <linux/udp.h>",
            "#define P(name, value) printf(\"%s %ld\\n\", name, (long) (value))",
            "int main(void) {",
            "    P(\"MMSGHDR_SIZE\", sizeof(struct mmsghdr));",
            "    P(\"MSG_HDR\", offsetof(struct mmsghdr, msg_hdr));",
            "    P(\"MSG_NAME\", offsetof(struct msghdr, msg_name));",
            "    P(\"MSG_NAMELEN\", offsetof(struct msghdr, msg_namelen));",
            "    P(\"MSG_IOV\", offsetof(struct msghdr, msg_iov));",
            "    P(\"MSG_IOVLEN\", offsetof(struct msghdr, msg_iovlen));",
            "    P(\"MSG_LEN\", offsetof(struct mmsghdr, msg_len));",
            "    P(\"MSG_CONTROL\", offsetof(struct msghdr, msg_control));",
            "    P(\"MSG_CONTROLLEN\", offsetof(struct msghdr, msg_controllen));",
            "    P(\"CMSG_LEVEL\", offsetof(struct cmsghdr, cmsg_level));",
            "    P(\"CMSG_TYPE\", offsetof(struct cmsghdr, cmsg_type));",
            "    struct cmsghdr h;",
            "    P(\"CMSG_DATA\", (char *) CMSG_DATA(&h) - (char *) &h);",
            "    P(\"CMSG_LEN_U16\", CMSG_LEN(sizeof(unsigned short)));",
            "    P(\"CMSG_SPACE_U16\", CMSG_SPACE(sizeof(unsigned short)));",
            "    P(\"CMSG_SPACE_INT\", CMSG_SPACE(sizeof(int)));",
            "    P(\"SOL_UDP\", IPPROTO_UDP);",
            "    P(\"UDP_SEGMENT\", UDP_SEGMENT);",
            "    P(\"UDP_GRO\", UDP_GRO);",
            "    P(\"IOVEC_SIZE\", sizeof(struct iovec));",
            "    P(\"IOV_BASE\", offsetof(struct iovec, iov_base));",
            "    P(\"IOV_LEN\", offsetof(struct iovec, iov_len));",
            "    P(\"SOCKADDR_IN6_SIZE\", sizeof(struct sockaddr_in6));",
            "    P(\"SOCKADDR_IN_SIZE\", sizeof(struct sockaddr_in));",
            "    P(\"SIN6_FLOWINFO\", offsetof(struct sockaddr_in6, sin6_flowinfo));",
            "    P(\"SIN_FAMILY\", offsetof(struct sockaddr_in, sin_family));",
            "    P(\"SIN_PORT\", offsetof(struct sockaddr_in, sin_port));",
            "    P(\"SIN_ADDR\", offsetof(struct sockaddr_in, sin_addr));",
            "    P(\"SIN6_FAMILY\", offsetof(struct sockaddr_in6, sin6_family));",
            "    P(\"SIN6_PORT\", offsetof(struct sockaddr_in6, sin6_port));",
            "    P(\"SIN6_ADDR\", offsetof(struct sockaddr_in6, sin6_addr));",
            "    P(\"SIN6_SCOPE_ID\", offsetof(struct sockaddr_in6, sin6_scope_id));",
            "    P(\"MSG_DONTWAIT\", MSG_DONTWAIT);",
            "    P(\"AF_INET\", AF_INET);",
            "    P(\"AF_INET6\", AF_INET6);",
            "    return 0;",
            "}",
            "");

    @TempDir
    Path dir;

    @Test
    void layoutsAreTheCLibrarys() throws Exception {
        final Map<String, Long> c = CLayout.compileAndRun(dir, PROGRAM);
        CLayout.same(c, "MMSGHDR_SIZE", Recvmmsg.MMSGHDR_SIZE);
        CLayout.same(c, "MSG_HDR", 0);
        CLayout.same(c, "MSG_NAME", Recvmmsg.MSG_NAME);
        CLayout.same(c, "MSG_NAMELEN", Recvmmsg.MSG_NAMELEN);
        CLayout.same(c, "MSG_IOV", Recvmmsg.MSG_IOV);
        CLayout.same(c, "MSG_IOVLEN", Recvmmsg.MSG_IOVLEN);
        CLayout.same(c, "MSG_LEN", Recvmmsg.MSG_LEN);
        CLayout.same(c, "MSG_CONTROL", Recvmmsg.MSG_CONTROL);
        CLayout.same(c, "MSG_CONTROLLEN", Recvmmsg.MSG_CONTROLLEN);
        CLayout.same(c, "CMSG_LEVEL", NativeSocket.CMSG_LEVEL);
        CLayout.same(c, "CMSG_TYPE", NativeSocket.CMSG_TYPE);
        CLayout.same(c, "CMSG_DATA", NativeSocket.CMSG_DATA);
        CLayout.same(c, "CMSG_LEN_U16", Sendmmsg.SEGMENT_CMSG_LEN);
        CLayout.same(c, "CMSG_SPACE_U16", Sendmmsg.SEGMENT_CMSG_SPACE);
        assertTrue(c.get("CMSG_SPACE_INT") <= Recvmmsg.CONTROL_SIZE, "the UDP_GRO cmsg fits its room");
        CLayout.same(c, "SOL_UDP", NativeSocket.SOL_UDP);
        CLayout.same(c, "UDP_SEGMENT", NativeSocket.UDP_SEGMENT);
        CLayout.same(c, "UDP_GRO", NativeSocket.UDP_GRO);
        CLayout.same(c, "IOVEC_SIZE", Recvmmsg.IOVEC_SIZE);
        CLayout.same(c, "IOV_BASE", 0);
        CLayout.same(c, "IOV_LEN", Recvmmsg.IOV_LEN);
        assertTrue(c.get("SOCKADDR_IN6_SIZE") <= Recvmmsg.NAME_SIZE, "a sender's address fits its name slot");
        CLayout.same(c, "SOCKADDR_IN_SIZE", Sendmmsg.SOCKADDR_IN_SIZE);
        CLayout.same(c, "SOCKADDR_IN6_SIZE", Sendmmsg.SOCKADDR_IN6_SIZE);
        CLayout.same(c, "SIN6_FLOWINFO", Sendmmsg.SIN6_FLOWINFO);
        CLayout.same(c, "SIN_FAMILY", 0);
        CLayout.same(c, "SIN6_FAMILY", 0);
        CLayout.same(c, "SIN_PORT", Recvmmsg.SIN_PORT);
        CLayout.same(c, "SIN6_PORT", Recvmmsg.SIN_PORT);
        CLayout.same(c, "SIN_ADDR", Recvmmsg.SIN_ADDR);
        CLayout.same(c, "SIN6_ADDR", Recvmmsg.SIN6_ADDR);
        CLayout.same(c, "SIN6_SCOPE_ID", Recvmmsg.SIN6_SCOPE_ID);
        CLayout.same(c, "MSG_DONTWAIT", Recvmmsg.MSG_DONTWAIT);
        CLayout.same(c, "AF_INET", Recvmmsg.AF_INET);
        CLayout.same(c, "AF_INET6", Recvmmsg.AF_INET6);
    }
}
