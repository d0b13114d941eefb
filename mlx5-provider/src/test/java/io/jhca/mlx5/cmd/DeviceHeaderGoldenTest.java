package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Golden vectors from the kernel's device.h: init segment offsets, the command entry ({@code struct mlx5_cmd_layout})
 * and mailbox block ({@code struct mlx5_cmd_prot_block}) offsets and bytes, command status values and the transport
 * constants.
 */
class DeviceHeaderGoldenTest {

    private static final Map<String, Long> C = new HashMap<>();
    private static byte[] cEntry;
    private static byte[] cBlock;

    @BeforeAll
    static void runC(@TempDir Path dir) throws Exception {
        StringBuilder c = new StringBuilder();
        c.append("#include \"kshim.h\"\n#include <linux/mlx5/device.h>\n#include <stdio.h>\n\n")
                .append("#define OFF(s, f) printf(\"K \" #s \".\" #f \" %zu\\n\", offsetof(struct s, f))\n")
                .append("#define VAL(x) printf(\"K \" #x \" %lld\\n\", (long long)(x))\n")
                .append("static void dump(const char *tag, const void *v, size_t n)\n{\n")
                .append("\tconst unsigned char *p = v;\n\tprintf(\"B %s \", tag);\n")
                .append("\tfor (size_t i = 0; i < n; i++)\n\t\tprintf(\"%02x\", p[i]);\n\tprintf(\"\\n\");\n}\n\n")
                .append("int main(void)\n{\n");
        for (String f : List.of("fw_rev", "cmdif_rev_fw_sub", "cmdq_addr_h", "cmdq_addr_l_sz", "cmd_dbell",
                "initializing", "health", "health.assert_exit_ptr", "health.assert_callra", "health.fw_ver",
                "health.hw_id", "health.irisc_index", "health.synd", "health.ext_synd", "cmd_exec_to",
                "cmd_q_init_to", "internal_timer_h", "internal_timer_l", "health_counter", "real_time_h",
                "real_time_l", "ieee1588_clk", "ieee1588_clk_type", "clr_intx")) {
            c.append("\tOFF(mlx5_init_seg, ").append(f).append(");\n");
        }
        for (String f : List.of("type", "inlen", "in_ptr", "in", "out", "out_ptr", "outlen", "token", "sig",
                "status_own")) {
            c.append("\tOFF(mlx5_cmd_layout, ").append(f).append(");\n");
        }
        for (String f : List.of("data", "next", "block_num", "token", "ctrl_sig", "sig")) {
            c.append("\tOFF(mlx5_cmd_prot_block, ").append(f).append(");\n");
        }
        c.append("\tVAL(sizeof(struct mlx5_init_seg));\n\tVAL(sizeof(struct mlx5_cmd_layout));\n")
                .append("\tVAL(sizeof(struct mlx5_cmd_prot_block));\n\tVAL(MLX5_PCI_CMD_XPORT);\n")
                .append("\tVAL(MLX5_CMD_DATA_BLOCK_SIZE);\n\tVAL(MLX5_MAX_COMMANDS);\n")
                .append("\tVAL(MLX5_ADAPTER_PAGE_SIZE);\n\tVAL(MLX5_NIC_IFC_OFFSET);\n")
                .append("\tVAL(HCA_CAP_OPMOD_GET_MAX);\n\tVAL(HCA_CAP_OPMOD_GET_CUR);\n")
                .append("\tVAL(MLX5_CAP_GENERAL);\n\tVAL(MLX5_CAP_ETHERNET_OFFLOADS);\n\tVAL(MLX5_CAP_ODP);\n")
                .append("\tVAL(MLX5_CAP_ATOMIC);\n\tVAL(MLX5_CAP_ROCE);\n");
        for (CmdStatus s : CmdStatus.values()) {
            c.append("\tVAL(MLX5_CMD_STAT_").append(s.name()).append(");\n");
        }
        // one entry and one block filled through the kernel's own struct, to compare bytes
        c.append("\t{\n\t\tstruct mlx5_cmd_layout l;\n\t\tmemset(&l, 0, sizeof(l));\n")
                .append("\t\tl.type = MLX5_PCI_CMD_XPORT;\n\t\tl.inlen = cpu_to_be32(0x1234);\n")
                .append("\t\tl.in_ptr = cpu_to_be64(0x1122334455667000ull);\n")
                .append("\t\tl.in[0] = cpu_to_be32(0x05000000);\n\t\tl.in[3] = cpu_to_be32(0xa5a5a5a5);\n")
                .append("\t\tl.out[1] = cpu_to_be32(0xdeadbeef);\n")
                .append("\t\tl.out_ptr = cpu_to_be64(0x0000000abcdef400ull);\n")
                .append("\t\tl.outlen = cpu_to_be32(0x1010);\n\t\tl.token = 0x5a;\n\t\tl.status_own = 0x1;\n")
                .append("\t\tdump(\"entry\", &l, sizeof(l));\n\t}\n")
                .append("\t{\n\t\tstatic struct mlx5_cmd_prot_block b;\n\t\tmemset(&b, 0, sizeof(b));\n")
                .append("\t\tb.data[0] = 0x11; b.data[511] = 0x22;\n")
                .append("\t\tb.next = cpu_to_be64(0x0000000100002400ull);\n\t\tb.block_num = cpu_to_be32(3);\n")
                .append("\t\tb.token = 0x5a;\n\t\tdump(\"block\", &b, sizeof(b));\n\t}\n")
                .append("\treturn 0;\n}\n");
        for (String line : NativeHeaders.compileAndRun(dir, "device_golden", c.toString())) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("K")) {
                int last = line.lastIndexOf(' ');
                C.put(line.substring(2, last), Long.parseLong(line.substring(last + 1).trim()));
            } else if (w[0].equals("B") && w[1].equals("entry")) {
                cEntry = HexFormat.of().parseHex(w[2]);
            } else if (w[0].equals("B") && w[1].equals("block")) {
                cBlock = HexFormat.of().parseHex(w[2]);
            }
        }
    }

    private static long c(String key) {
        Long v = C.get(key);
        if (v == null) {
            throw new AssertionError("C program printed no " + key);
        }
        return v;
    }

    @Test
    void initSegmentOffsets() {
        assertEquals(c("mlx5_init_seg.fw_rev"), InitSegment.FW_REV);
        assertEquals(c("mlx5_init_seg.cmdif_rev_fw_sub"), InitSegment.CMDIF_REV_FW_SUB);
        assertEquals(c("mlx5_init_seg.cmdq_addr_h"), InitSegment.CMDQ_ADDR_H);
        assertEquals(c("mlx5_init_seg.cmdq_addr_l_sz"), InitSegment.CMDQ_ADDR_L_SZ);
        assertEquals(c("mlx5_init_seg.cmd_dbell"), InitSegment.CMD_DBELL);
        assertEquals(c("mlx5_init_seg.initializing"), InitSegment.INITIALIZING);
        assertEquals(c("mlx5_init_seg.health"), InitSegment.HEALTH);
        assertEquals(c("mlx5_init_seg.health.assert_exit_ptr"), InitSegment.HEALTH_ASSERT_EXIT_PTR);
        assertEquals(c("mlx5_init_seg.health.assert_callra"), InitSegment.HEALTH_ASSERT_CALLRA);
        assertEquals(c("mlx5_init_seg.health.fw_ver"), InitSegment.HEALTH_FW_VER);
        assertEquals(c("mlx5_init_seg.health.hw_id"), InitSegment.HEALTH_HW_ID);
        // irisc_index, synd, ext_synd share the dword at 0x23c: bytes 0, 1 and 2..3
        assertEquals(c("mlx5_init_seg.health.irisc_index"), InitSegment.HEALTH_SYND_DWORD);
        assertEquals(c("mlx5_init_seg.health.synd"), InitSegment.HEALTH_SYND_DWORD + 1);
        assertEquals(c("mlx5_init_seg.health.ext_synd"), InitSegment.HEALTH_SYND_DWORD + 2);
        assertEquals(c("mlx5_init_seg.cmd_exec_to"), InitSegment.CMD_EXEC_TO);
        assertEquals(c("mlx5_init_seg.cmd_q_init_to"), InitSegment.CMD_Q_INIT_TO);
        assertEquals(c("mlx5_init_seg.internal_timer_h"), InitSegment.INTERNAL_TIMER_H);
        assertEquals(c("mlx5_init_seg.internal_timer_l"), InitSegment.INTERNAL_TIMER_L);
        assertEquals(c("mlx5_init_seg.health_counter"), InitSegment.HEALTH_COUNTER);
        assertEquals(c("mlx5_init_seg.real_time_h"), InitSegment.REAL_TIME_H);
        assertEquals(c("mlx5_init_seg.real_time_l"), InitSegment.REAL_TIME_L);
        assertEquals(c("mlx5_init_seg.ieee1588_clk"), InitSegment.IEEE1588_CLK);
        assertEquals(c("mlx5_init_seg.ieee1588_clk_type"), InitSegment.IEEE1588_CLK_TYPE);
        assertEquals(c("mlx5_init_seg.clr_intx"), InitSegment.CLR_INTX);
        assertEquals(c("sizeof(struct mlx5_init_seg)"), InitSegment.SIZE);
        assertEquals(c("MLX5_NIC_IFC_OFFSET"), 8, "nic_interface shift used by InitSegment");
        assertEquals(c("MLX5_ADAPTER_PAGE_SIZE"), CmdQueue.PAGE_SIZE);
        assertEquals(c("MLX5_ADAPTER_PAGE_SIZE"), InitSegment.CMDQ_ALIGNMENT);
    }

    @Test
    void commandEntryOffsetsAndBytes() {
        assertEquals(c("mlx5_cmd_layout.type"), CmdQueueEntry.TYPE);
        assertEquals(c("mlx5_cmd_layout.inlen"), CmdQueueEntry.INLEN);
        assertEquals(c("mlx5_cmd_layout.in_ptr"), CmdQueueEntry.IN_PTR);
        assertEquals(c("mlx5_cmd_layout.in"), CmdQueueEntry.IN);
        assertEquals(c("mlx5_cmd_layout.out"), CmdQueueEntry.OUT);
        assertEquals(c("mlx5_cmd_layout.out_ptr"), CmdQueueEntry.OUT_PTR);
        assertEquals(c("mlx5_cmd_layout.outlen"), CmdQueueEntry.OUTLEN);
        assertEquals(c("mlx5_cmd_layout.token"), CmdQueueEntry.TOKEN);
        assertEquals(c("mlx5_cmd_layout.sig"), CmdQueueEntry.SIG);
        assertEquals(c("mlx5_cmd_layout.status_own"), CmdQueueEntry.STATUS_OWN);
        assertEquals(c("sizeof(struct mlx5_cmd_layout)"), CmdQueueEntry.SIZE);
        assertEquals(c("MLX5_PCI_CMD_XPORT"), CmdQueueEntry.TYPE_PCIE);
        assertEquals(c("MLX5_MAX_COMMANDS"), CmdQueue.MAX_COMMANDS);

        UnsafeBuffer b = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        UnsafeBuffer in = new UnsafeBuffer(new byte[16]);
        in.putInt(0, 0x05000000, java.nio.ByteOrder.BIG_ENDIAN);
        in.putInt(12, 0xa5a5a5a5, java.nio.ByteOrder.BIG_ENDIAN);
        UnsafeBuffer out = new UnsafeBuffer(new byte[16]);
        out.putInt(4, 0xdeadbeef, java.nio.ByteOrder.BIG_ENDIAN);
        CmdQueueEntry e = new CmdQueueEntry().wrap(b, 0);
        e.type(CmdQueueEntry.TYPE_PCIE).inLength(0x1234).inPointer(0x1122334455667000L)
                .outPointer(0xabcdef400L).outLength(0x1010).token(0x5a).statusOwn(CmdQueueEntry.OWNER_HW);
        e.putInlineInput(in, 0, 16);
        e.putInlineOutput(out, 0, 16);
        byte[] java = new byte[64];
        b.getBytes(0, java);
        assertArrayEquals(cEntry, java);
    }

    @Test
    void mailboxOffsetsAndBytes() {
        assertEquals(c("mlx5_cmd_prot_block.data"), 0);
        assertEquals(c("mlx5_cmd_prot_block.next"), Mailbox.NEXT);
        assertEquals(c("mlx5_cmd_prot_block.block_num"), Mailbox.BLOCK_NUM);
        assertEquals(c("mlx5_cmd_prot_block.token"), Mailbox.TOKEN);
        assertEquals(c("mlx5_cmd_prot_block.ctrl_sig"), Mailbox.CTRL_SIG);
        assertEquals(c("mlx5_cmd_prot_block.sig"), Mailbox.SIG);
        assertEquals(c("sizeof(struct mlx5_cmd_prot_block)"), Mailbox.SIZE);
        assertEquals(c("MLX5_CMD_DATA_BLOCK_SIZE"), Mailbox.DATA_SIZE);
        // mlx5_core's dma_pool alignment: roundup_pow_of_two(sizeof(struct mlx5_cmd_prot_block))
        assertEquals(Long.highestOneBit(c("sizeof(struct mlx5_cmd_prot_block)") - 1) << 1, Mailbox.ALIGNMENT);

        UnsafeBuffer b = new UnsafeBuffer(new byte[Mailbox.SIZE]);
        b.putByte(0, (byte) 0x11);
        b.putByte(511, (byte) 0x22);
        new Mailbox().wrap(b, 0).next(0x100002400L).blockNumber(3).token(0x5a);
        assertArrayEquals(cBlock, b.byteArray());
    }

    @Test
    void statusValuesAndCapConstants() {
        for (CmdStatus s : CmdStatus.values()) {
            assertEquals(c("MLX5_CMD_STAT_" + s.name()), s.value(), s.name());
        }
        assertEquals(c("HCA_CAP_OPMOD_GET_MAX"), HcaCap.MODE_MAX);
        assertEquals(c("HCA_CAP_OPMOD_GET_CUR"), HcaCap.MODE_CURRENT);
        assertEquals(c("MLX5_CAP_GENERAL"), HcaCap.TYPE_GENERAL);
        assertEquals(c("MLX5_CAP_ETHERNET_OFFLOADS"), HcaCap.TYPE_ETHERNET_OFFLOADS);
        assertEquals(c("MLX5_CAP_ODP"), HcaCap.TYPE_ODP);
        assertEquals(c("MLX5_CAP_ATOMIC"), HcaCap.TYPE_ATOMIC);
        assertEquals(c("MLX5_CAP_ROCE"), HcaCap.TYPE_ROCE);
    }
}
