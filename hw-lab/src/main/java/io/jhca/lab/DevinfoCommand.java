package io.jhca.lab;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.GidType;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;

/**
 * ibv_devinfo: device and port attributes in the fields and layout of rdma-core's
 * libibverbs/examples/devinfo.c (v44). With -v, the limits jhca's {@link DeviceAttributes} and
 * {@link PortAttributes} carry and the GID table; fields the verbs API does not model are left out.
 */
@Command(name = "devinfo", mixinStandardHelpOptions = true,
        description = "Print device and port attributes, as ibv_devinfo does.")
public final class DevinfoCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV", description = "use IB device DEV (default: all devices)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "PORT", description = "use port PORT of the device (default: all ports)")
    Integer port;

    @Option(names = {"-l", "--list"}, description = "print only the device names")
    boolean list;

    @Option(names = {"-v", "--verbose"}, description = "print all the attributes of the device(s)")
    boolean verbose;

    /** IBV_DEVICE_* bits of verbs.h enum ibv_device_cap_flags and the names devinfo prints for them. */
    private static final String[] CAP_FLAG_NAMES = new String[32];

    static {
        String[][] flags = {
            {"0", "RESIZE_MAX_WR"}, {"1", "BAD_PKEY_CNTR"}, {"2", "BAD_QKEY_CNTR"}, {"3", "RAW_MULTI"},
            {"4", "AUTO_PATH_MIG"}, {"5", "CHANGE_PHY_PORT"}, {"6", "UD_AV_PORT_ENFORCE"}, {"7", "CURR_QP_STATE_MOD"},
            {"8", "SHUTDOWN_PORT"}, {"9", "INIT_TYPE"}, {"10", "PORT_ACTIVE_EVENT"}, {"11", "SYS_IMAGE_GUID"},
            {"12", "RC_RNR_NAK_GEN"}, {"13", "SRQ_RESIZE"}, {"14", "N_NOTIFY_CQ"}, {"17", "MEM_WINDOW"},
            {"18", "UD_IP_CSUM"}, {"20", "XRC"}, {"21", "MEM_MGT_EXTENSIONS"}, {"23", "MEM_WINDOW_TYPE_2A"},
            {"24", "MEM_WINDOW_TYPE_2B"}, {"25", "RC_IP_CSUM"}, {"26", "RAW_IP_CSUM"}, {"29", "MANAGED_FLOW_STEERING"},
        };
        for (String[] f : flags) {
            CAP_FLAG_NAMES[Integer.parseInt(f[0])] = f[1];
        }
    }

    @Override
    public void run() {
        if (port != null && port <= 0) {
            throw new ParameterException(spec.commandLine(), "-i/--ib-port must be a port number >= 1, got " + port);
        }
        PrintWriter out = spec.commandLine().getOut();
        List<DeviceInfo> devices = Verbs.devices();
        if (list) {
            out.printf("%d HCA%s found:%n", devices.size(), devices.size() != 1 ? "s" : "");
            for (DeviceInfo d : devices) {
                out.printf("\t%s%n", d.name());
            }
            out.println();
            out.flush();
            return;
        }
        if (device != null) {
            DeviceInfo found = null;
            for (DeviceInfo d : devices) {
                if (d.name().equals(device)) {
                    found = d;
                }
            }
            if (found == null) {
                throw new VerbsException(VerbsException.ENOENT, "IB device '" + device + "' wasn't found");
            }
            print(found, out);
        } else {
            if (devices.isEmpty()) {
                throw new VerbsException(VerbsException.ENOENT, "No IB devices found");
            }
            for (DeviceInfo d : devices) {
                print(d, out);
            }
        }
        out.flush();
    }

    private void print(DeviceInfo info, PrintWriter out) {
        try (Context ctx = Verbs.open(info.name())) {
            DeviceAttributes a = ctx.queryDevice();
            if (port != null && port > a.physPortCnt()) {
                throw new VerbsException(VerbsException.EINVAL, "Invalid port requested for device");
            }
            out.printf("hca_id:\t%s%n", info.name());
            out.printf("\ttransport:\t\t\t%s (%d)%n", transportText(info.transport()), transportValue(info.transport()));
            if (a.fwVer() != null && !a.fwVer().isEmpty()) {
                out.printf("\tfw_ver:\t\t\t\t%s%n", a.fwVer());
            }
            out.printf("\tnode_guid:\t\t\t%s%n", guid(a.nodeGuid()));
            out.printf("\tsys_image_guid:\t\t\t%s%n", guid(a.sysImageGuid()));
            out.printf("\tvendor_id:\t\t\t0x%04x%n", a.vendorId());
            out.printf("\tvendor_part_id:\t\t\t%d%n", a.vendorPartId());
            out.printf("\thw_ver:\t\t\t\t0x%X%n", a.hwVer());
            if (a.boardId() != null && !a.boardId().isEmpty()) {
                out.printf("\tboard_id:\t\t\t%s%n", a.boardId());
            }
            out.printf("\tphys_port_cnt:\t\t\t%d%n", a.physPortCnt());
            if (verbose) {
                printLimits(a, out);
            }
            for (int p = 1; p <= a.physPortCnt(); p++) {
                if (port != null && p != port) {
                    continue;
                }
                printPort(ctx, p, out);
            }
        }
    }

    private static void printLimits(DeviceAttributes a, PrintWriter out) {
        out.printf("\tmax_mr_size:\t\t\t0x%x%n", a.maxMrSize());
        out.printf("\tpage_size_cap:\t\t\t0x%x%n", a.pageSizeCap());
        out.printf("\tmax_qp:\t\t\t\t%d%n", a.maxQp());
        out.printf("\tmax_qp_wr:\t\t\t%d%n", a.maxQpWr());
        out.printf("\tdevice_cap_flags:\t\t0x%08x%n", (int) a.deviceCapFlags());
        int unknown = 0;
        for (int bit = 0; bit < 32; bit++) {
            if ((a.deviceCapFlags() & (1L << bit)) == 0) {
                continue;
            }
            if (CAP_FLAG_NAMES[bit] != null) {
                out.printf("\t\t\t\t\t%s%n", CAP_FLAG_NAMES[bit]);
            } else {
                unknown |= 1 << bit;
            }
        }
        if (unknown != 0) {
            out.printf("\t\t\t\t\tUnknown flags: 0x%X%n", unknown);
        }
        out.printf("\tmax_sge:\t\t\t%d%n", a.maxSge());
        out.printf("\tmax_sge_rd:\t\t\t%d%n", a.maxSgeRd());
        out.printf("\tmax_cq:\t\t\t\t%d%n", a.maxCq());
        out.printf("\tmax_cqe:\t\t\t%d%n", a.maxCqe());
        out.printf("\tmax_mr:\t\t\t\t%d%n", a.maxMr());
        out.printf("\tmax_pd:\t\t\t\t%d%n", a.maxPd());
        out.printf("\tmax_qp_rd_atom:\t\t\t%d%n", a.maxQpRdAtom());
        out.printf("\tmax_res_rd_atom:\t\t%d%n", a.maxResRdAtom());
        out.printf("\tmax_qp_init_rd_atom:\t\t%d%n", a.maxQpInitRdAtom());
        out.printf("\tatomic_cap:\t\t\t%s (%d)%n", atomicCap(a.atomicCap()), a.atomicCap());
        out.printf("\tmax_mw:\t\t\t\t%d%n", a.maxMw());   // devinfo.c prints it after max_ee and max_rdd
        out.printf("\tmax_ah:\t\t\t\t%d%n", a.maxAh());
        // ibv_devinfo.c: max_srq, and its WR and SGE limits only for a device that has SRQs
        out.printf("\tmax_srq:\t\t\t%d%n", a.maxSrq());
        if (a.maxSrq() != 0) {
            out.printf("\tmax_srq_wr:\t\t\t%d%n", a.maxSrqWr());
            out.printf("\tmax_srq_sge:\t\t\t%d%n", a.maxSrqSge());
        }
        out.printf("\tmax_pkeys:\t\t\t%d%n", a.maxPkeys());
        out.printf("\tlocal_ca_ack_delay:\t\t%d%n", a.localCaAckDelay());
        out.printf("\tmax_inline_data:\t\t%d%n", a.maxInlineData());
    }

    private void printPort(Context ctx, int p, PrintWriter out) {
        PortAttributes pa = ctx.queryPort(p);
        out.printf("\t\tport:\t%d%n", p);
        out.printf("\t\t\tstate:\t\t\t%s (%d)%n", portState(pa.state().value()), pa.state().value());
        out.printf("\t\t\tmax_mtu:\t\t%s (%d)%n", mtu(pa.maxMtu()), pa.maxMtu().value());
        out.printf("\t\t\tactive_mtu:\t\t%s (%d)%n", mtu(pa.activeMtu()), pa.activeMtu().value());
        out.printf("\t\t\tsm_lid:\t\t\t%d%n", pa.smLid());
        out.printf("\t\t\tport_lid:\t\t%d%n", pa.lid());
        out.printf("\t\t\tport_lmc:\t\t0x%02x%n", pa.lmc());
        out.printf("\t\t\tlink_layer:\t\t%s%n", linkLayer(pa.linkLayer()));
        if (verbose) {
            out.printf("\t\t\tmax_msg_sz:\t\t0x%x%n", pa.maxMsgSz());
            out.printf("\t\t\tport_cap_flags:\t\t0x%08x%n", pa.portCapFlags());
            out.printf("\t\t\tgid_tbl_len:\t\t%d%n", pa.gidTblLen());
            out.printf("\t\t\tactive_width:\t\t%sX (%d)%n", width(pa.activeWidth()), pa.activeWidth());
            out.printf("\t\t\tactive_speed:\t\t%s (%d)%n", speed(pa.activeSpeed()), pa.activeSpeed());
            if (transportValue(ctx.device().transport()) == 0) {
                out.printf("\t\t\tphys_state:\t\t%s (%d)%n", physState(pa.physState()), pa.physState());
            }
            for (int i = 0; i < pa.gidTblLen(); i++) {
                Gid g = ctx.queryGid(p, i);
                if (!nullGid(g)) {
                    out.println(gidLine(i, g, pa.linkLayer(), ctx.queryGidType(p, i)));
                }
            }
        }
        out.println();
    }

    /**
     * One line of the GID table. On Ethernet a RoCE v2 GID (what jhca's devices send with), printed with inet_ntop
     * and ", RoCE v2"; on InfiniBand the raw "xxxx:xxxx:..." form without a type.
     */
    static String gidLine(int index, Gid g, LinkLayer ll) {
        return gidLine(index, g, ll, GidType.ROCE_V2);
    }

    /** One line of the GID table with the entry's type (", RoCE v1" or ", RoCE v2" on Ethernet, as devinfo.c). */
    static String gidLine(int index, Gid g, LinkLayer ll, GidType type) {
        if (ll == LinkLayer.ETHERNET) {
            return CFormat.f("\t\t\tGID[%3d]:\t\t%s, %s", index, Inet6Text.format(g.bytes()),
                    type == GidType.ROCE_V1 ? "RoCE v1" : "RoCE v2");
        }
        return CFormat.f("\t\t\tGID[%3d]:\t\t%s", index, g.toString());
    }

    /** devinfo.c null_gid: an entry is empty when its interface ID (bytes 8..15) is zero. */
    static boolean nullGid(Gid g) {
        for (int i = 8; i < Gid.LENGTH; i++) {
            if (g.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** devinfo.c guid_str: four groups of four hex digits. */
    static String guid(long guid) {
        return CFormat.f("%04x:%04x:%04x:%04x", (guid >>> 48) & 0xffff, (guid >>> 32) & 0xffff, (guid >>> 16) & 0xffff,
                guid & 0xffff);
    }

    /** enum ibv_transport_type value for the transport name a provider reports. */
    static int transportValue(String t) {
        switch (t == null ? "" : t) {
            case "InfiniBand": return 0;
            case "iWARP": return 1;
            case "usNIC": return 2;
            case "usNIC UDP": return 3;
            case "unspecified": return 4;
            default: return -1;
        }
    }

    static String transportText(String t) {
        return transportValue(t) < 0 ? "invalid transport" : t;
    }

    static String portState(int state) {
        switch (state) {
            case 1: return "PORT_DOWN";
            case 2: return "PORT_INIT";
            case 3: return "PORT_ARMED";
            case 4: return "PORT_ACTIVE";
            default: return "invalid state";
        }
    }

    static String mtu(Mtu m) {
        return Integer.toString(m.bytes());
    }

    static String linkLayer(LinkLayer ll) {
        switch (ll) {
            case UNSPECIFIED: return "Unspecified";
            case INFINIBAND: return "InfiniBand";
            case ETHERNET: return "Ethernet";
            default: return "Unknown";
        }
    }

    static String atomicCap(int cap) {
        switch (cap) {
            case 0: return "ATOMIC_NONE";
            case 1: return "ATOMIC_HCA";
            case 2: return "ATOMIC_GLOB";
            default: return "invalid atomic capability";
        }
    }

    static String width(int w) {
        switch (w) {
            case 1: return "1";
            case 2: return "4";
            case 4: return "8";
            case 8: return "12";
            case 16: return "2";
            default: return "invalid width";
        }
    }

    static String speed(int s) {
        switch (s) {
            case 1: return "2.5 Gbps";
            case 2: return "5.0 Gbps";
            case 4:
            case 8: return "10.0 Gbps";
            case 16: return "14.0 Gbps";
            case 32: return "25.0 Gbps";
            case 64: return "50.0 Gbps";
            case 128: return "100.0 Gbps";
            default: return "invalid speed";
        }
    }

    static String physState(int s) {
        switch (s) {
            case 1: return "SLEEP";
            case 2: return "POLLING";
            case 3: return "DISABLED";
            case 4: return "PORT_CONFIGURATION TRAINNING"; // sic, as devinfo.c spells it
            case 5: return "LINK_UP";
            case 6: return "LINK_ERROR_RECOVERY";
            case 7: return "PHY TEST";
            default: return "invalid physical state";
        }
    }
}
