package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The native layouts and constants {@link PacketRing} writes and reads, against the kernel's UAPI headers compiled
 * with gcc (linux/if_packet.h, linux/filter.h, linux/virtio_net.h, asm/socket.h): struct tpacket2_hdr, sockaddr_ll,
 * tpacket_req, virtio_net_hdr, sock_fprog and sock_filter, the socket options, and the classic BPF opcodes of the
 * ring's filter.
 */
class PacketRingLayoutGoldenTest {

    private static final String PROGRAM = String.join("\n",
            "#define _GNU_SOURCE",
            "#include <stdio.h>",
            "#include <stddef.h>",
            "#include <sys/socket.h>",
            "#include <linux/if_packet.h>",
            "#include <linux/if_ether.h>",
            "#include <linux/filter.h>",
            "#include <linux/virtio_net.h>",
            "#include <asm/socket.h>",
            "#define P(name, value) printf(\"%s %ld\\n\", name, (long) (value))",
            "int main(void) {",
            "    P(\"AF_PACKET\", AF_PACKET);",
            "    P(\"SOCK_RAW\", SOCK_RAW);",
            "    P(\"SOCK_NONBLOCK\", SOCK_NONBLOCK);",
            "    P(\"SOCK_CLOEXEC\", SOCK_CLOEXEC);",
            "    P(\"ETH_P_IP\", ETH_P_IP);",
            "    P(\"SKF_AD_IFINDEX_WORD\", SKF_AD_OFF + SKF_AD_IFINDEX);",
            "    P(\"TP_SLL\", TPACKET_ALIGN(sizeof(struct tpacket2_hdr)));",
            "    P(\"SOL_PACKET\", SOL_PACKET);",
            "    P(\"PACKET_RX_RING\", PACKET_RX_RING);",
            "    P(\"PACKET_VERSION\", PACKET_VERSION);",
            "    P(\"PACKET_VNET_HDR\", PACKET_VNET_HDR);",
            "    P(\"PACKET_IGNORE_OUTGOING\", PACKET_IGNORE_OUTGOING);",
            "    P(\"TPACKET_V2\", TPACKET_V2);",
            "    P(\"SO_ATTACH_FILTER\", SO_ATTACH_FILTER);",
            "    P(\"SO_DETACH_FILTER\", SO_DETACH_FILTER);",
            "    P(\"TP_STATUS\", offsetof(struct tpacket2_hdr, tp_status));",
            "    P(\"TP_LEN\", offsetof(struct tpacket2_hdr, tp_len));",
            "    P(\"TP_SNAPLEN\", offsetof(struct tpacket2_hdr, tp_snaplen));",
            "    P(\"TP_MAC\", offsetof(struct tpacket2_hdr, tp_mac));",
            "    P(\"TP_NET\", offsetof(struct tpacket2_hdr, tp_net));",
            "    P(\"TPACKET2_HDRLEN\", sizeof(struct tpacket2_hdr));",
            "    P(\"TP_STATUS_USER\", TP_STATUS_USER);",
            "    P(\"TP_STATUS_KERNEL\", TP_STATUS_KERNEL);",
            "    P(\"SLL_FAMILY\", offsetof(struct sockaddr_ll, sll_family));",
            "    P(\"SLL_PROTOCOL\", offsetof(struct sockaddr_ll, sll_protocol));",
            "    P(\"SLL_IFINDEX\", offsetof(struct sockaddr_ll, sll_ifindex));",
            "    P(\"SOCKADDR_LL_SIZE\", sizeof(struct sockaddr_ll));",
            "    P(\"TPACKET_REQ_SIZE\", sizeof(struct tpacket_req));",
            "    P(\"TP_BLOCK_SIZE\", offsetof(struct tpacket_req, tp_block_size));",
            "    P(\"TP_BLOCK_NR\", offsetof(struct tpacket_req, tp_block_nr));",
            "    P(\"TP_FRAME_SIZE\", offsetof(struct tpacket_req, tp_frame_size));",
            "    P(\"TP_FRAME_NR\", offsetof(struct tpacket_req, tp_frame_nr));",
            "    P(\"VNET_HDR_SIZE\", sizeof(struct virtio_net_hdr));",
            "    P(\"VNET_GSO_TYPE\", offsetof(struct virtio_net_hdr, gso_type));",
            "    P(\"VNET_GSO_SIZE\", offsetof(struct virtio_net_hdr, gso_size));",
            "    P(\"VNET_GSO_NONE\", VIRTIO_NET_HDR_GSO_NONE);",
            "#ifdef VIRTIO_NET_HDR_GSO_UDP_L4",
            "    P(\"VNET_GSO_UDP_L4\", VIRTIO_NET_HDR_GSO_UDP_L4);",
            "#else",
            "    P(\"VNET_GSO_UDP_L4\", -1);",
            "#endif",
            "    P(\"VNET_GSO_ECN\", VIRTIO_NET_HDR_GSO_ECN);",
            "    P(\"SOCK_FPROG_SIZE\", sizeof(struct sock_fprog));",
            "    P(\"SOCK_FPROG_FILTER\", offsetof(struct sock_fprog, filter));",
            "    P(\"SOCK_FILTER_SIZE\", sizeof(struct sock_filter));",
            "    P(\"SF_CODE\", offsetof(struct sock_filter, code));",
            "    P(\"SF_JT\", offsetof(struct sock_filter, jt));",
            "    P(\"SF_JF\", offsetof(struct sock_filter, jf));",
            "    P(\"SF_K\", offsetof(struct sock_filter, k));",
            "    P(\"LD_H_ABS\", BPF_LD | BPF_H | BPF_ABS);",
            "    P(\"LD_W_ABS\", BPF_LD | BPF_W | BPF_ABS);",
            "    P(\"LD_B_ABS\", BPF_LD | BPF_B | BPF_ABS);",
            "    P(\"LD_H_IND\", BPF_LD | BPF_H | BPF_IND);",
            "    P(\"LDX_B_MSH\", BPF_LDX | BPF_B | BPF_MSH);",
            "    P(\"JMP_JEQ_K\", BPF_JMP | BPF_JEQ | BPF_K);",
            "    P(\"JMP_JSET_K\", BPF_JMP | BPF_JSET | BPF_K);",
            "    P(\"RET_K\", BPF_RET | BPF_K);",
            "    return 0;",
            "}",
            "");

    @TempDir
    Path dir;

    @Test
    void layoutsAreTheKernels() throws Exception {
        final Map<String, Long> c = CLayout.compileAndRun(dir, PROGRAM);
        CLayout.same(c, "AF_PACKET", PacketRing.AF_PACKET);
        CLayout.same(c, "SOCK_RAW", PacketRing.SOCK_RAW);
        CLayout.same(c, "SOCK_NONBLOCK", PacketRing.SOCK_NONBLOCK);
        CLayout.same(c, "SOCK_CLOEXEC", PacketRing.SOCK_CLOEXEC);
        CLayout.same(c, "ETH_P_IP", PacketRing.ETH_P_IP);
        CLayout.same(c, "SKF_AD_IFINDEX_WORD", PacketRing.SKF_AD_IFINDEX_WORD);
        CLayout.same(c, "TP_SLL", PacketRing.TP_SLL);
        CLayout.same(c, "SOL_PACKET", PacketRing.SOL_PACKET);
        CLayout.same(c, "PACKET_RX_RING", PacketRing.PACKET_RX_RING);
        CLayout.same(c, "PACKET_VERSION", PacketRing.PACKET_VERSION);
        CLayout.same(c, "PACKET_VNET_HDR", PacketRing.PACKET_VNET_HDR);
        CLayout.same(c, "PACKET_IGNORE_OUTGOING", PacketRing.PACKET_IGNORE_OUTGOING);
        CLayout.same(c, "TPACKET_V2", PacketRing.TPACKET_V2);
        CLayout.same(c, "SO_ATTACH_FILTER", PacketRing.SO_ATTACH_FILTER);
        CLayout.same(c, "SO_DETACH_FILTER", PacketRing.SO_DETACH_FILTER);
        CLayout.same(c, "TP_STATUS", PacketRing.TP_STATUS);
        CLayout.same(c, "TP_LEN", PacketRing.TP_LEN);
        CLayout.same(c, "TP_SNAPLEN", PacketRing.TP_SNAPLEN);
        CLayout.same(c, "TP_MAC", PacketRing.TP_MAC);
        CLayout.same(c, "TP_NET", PacketRing.TP_NET);
        CLayout.same(c, "TPACKET2_HDRLEN", PacketRing.TPACKET2_HDRLEN);
        CLayout.same(c, "TP_STATUS_USER", PacketRing.TP_STATUS_USER);
        CLayout.same(c, "TP_STATUS_KERNEL", 0);
        CLayout.same(c, "SLL_FAMILY", 0);
        CLayout.same(c, "SLL_PROTOCOL", PacketRing.SLL_PROTOCOL);
        CLayout.same(c, "SLL_IFINDEX", PacketRing.SLL_IFINDEX);
        CLayout.same(c, "SOCKADDR_LL_SIZE", PacketRing.SOCKADDR_LL_SIZE);
        CLayout.same(c, "TPACKET_REQ_SIZE", PacketRing.TPACKET_REQ_SIZE);
        CLayout.same(c, "TP_BLOCK_SIZE", 0);
        CLayout.same(c, "TP_BLOCK_NR", 4);
        CLayout.same(c, "TP_FRAME_SIZE", 8);
        CLayout.same(c, "TP_FRAME_NR", 12);
        CLayout.same(c, "VNET_HDR_SIZE", PacketRing.VNET_HDR_SIZE);
        CLayout.same(c, "VNET_GSO_TYPE", PacketRing.VNET_GSO_TYPE);
        CLayout.same(c, "VNET_GSO_SIZE", PacketRing.VNET_GSO_SIZE);
        CLayout.same(c, "VNET_GSO_NONE", PacketRing.VNET_GSO_NONE);
        if (c.get("VNET_GSO_UDP_L4") == -1) {
            // headers older than Linux 6.2 lack it: the value is the virtio 1.2 specification's (5.1.6,
            // VIRTIO_NET_HDR_GSO_UDP_L4 5), which 6.2's linux/virtio_net.h took
            assertEquals(5, PacketRing.VNET_GSO_UDP_L4);
        } else {
            CLayout.same(c, "VNET_GSO_UDP_L4", PacketRing.VNET_GSO_UDP_L4);
        }
        CLayout.same(c, "VNET_GSO_ECN", 0x80);
        CLayout.same(c, "SOCK_FPROG_SIZE", PacketRing.SOCK_FPROG_SIZE);
        CLayout.same(c, "SOCK_FPROG_FILTER", 8);
        CLayout.same(c, "SOCK_FILTER_SIZE", PacketRing.SOCK_FILTER_SIZE);
        CLayout.same(c, "SF_CODE", 0);
        CLayout.same(c, "SF_JT", 2);
        CLayout.same(c, "SF_JF", 3);
        CLayout.same(c, "SF_K", 4);
        CLayout.same(c, "LD_H_ABS", PacketRing.LD_H_ABS);
        CLayout.same(c, "LD_W_ABS", PacketRing.LD_W_ABS);
        CLayout.same(c, "LD_B_ABS", PacketRing.LD_B_ABS);
        CLayout.same(c, "LD_H_IND", PacketRing.LD_H_IND);
        CLayout.same(c, "LDX_B_MSH", PacketRing.LDX_B_MSH);
        CLayout.same(c, "JMP_JEQ_K", PacketRing.JMP_JEQ_K);
        CLayout.same(c, "JMP_JSET_K", PacketRing.JMP_JSET_K);
        CLayout.same(c, "RET_K", PacketRing.RET_K);
        assertTrue(PacketRing.FRAME_SIZE % 16 == 0 && PacketRing.FRAME_SIZE % 4096 == 0,
                "a frame is TPACKET_ALIGNMENT-aligned and a whole block of pages");
    }
}
