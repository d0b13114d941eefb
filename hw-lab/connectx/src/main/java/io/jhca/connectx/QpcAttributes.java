package io.jhca.connectx;

import org.agrona.DirectBuffer;

import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpTransitions;
import io.jhca.verbs.QpType;

/**
 * The verbs attributes a QP transition command carries, read from its qpc the way the firmware reads it: the fields
 * each transition always takes (kernel mlx5_ib qp.c, see {@link io.jhca.mlx5.cmd.QpLayouts}) plus those
 * opt_param_mask selects (qp.h {@code MLX5_QP_OPTPAR_*}), keeping only what the IBTA table allows for the transport,
 * so the rxe QP goes through exactly the same state machine:
 * <ul>
 *   <li>RST2INIT: pkey_index and vhca_port_num of the primary path; rre/rwe/rae (RC, UC) or q_key (UD);</li>
 *   <li>INIT2RTR (RC, UC): primary path (rgid_rip, src_addr_index, hop_limit, tclass, flow_label, sl), mtu,
 *       remote_qpn, next_rcv_psn; RC also log_rra_max and min_rnr_nak;</li>
 *   <li>RTR2RTS: next_send_psn; RC also ack_timeout, retry_count, rnr_retry, log_sra_max;</li>
 *   <li>INIT2INIT, RTS2RTS: the optional ones only.</li>
 * </ul>
 */
final class QpcAttributes {

    private static final String Q = "qpc.";
    private static final String P = "qpc.primary_address_path.";
    private static final int ACCESS_OPTS = QpModifyLayouts.OPTPAR_RRE | QpModifyLayouts.OPTPAR_RWE
            | QpModifyLayouts.OPTPAR_RAE;

    private QpcAttributes() {
    }

    static QpAttributes of(int opcode, DeviceQp qp, DirectBuffer i, Layout in, DeviceState st) throws CmdError {
        QpType t = qp.type;
        int opt = (int) in.get(i, 0, "opt_param_mask");
        QpAttributes a = new QpAttributes();
        QpState from;
        switch (opcode) {
            case CmdOpcode.RST2INIT_QP:
                from = QpState.RESET;
                a.state(QpState.INIT).pkeyIndex((int) in.get(i, 0, P + "pkey_index")).port(port(i, in));
                if (t == QpType.UD) {
                    a.qkey((int) in.get(i, 0, Q + "q_key"));
                } else {
                    a.accessFlags(access(i, in));
                }
                break;
            case CmdOpcode.INIT2INIT_QP:
                from = QpState.INIT;
                a.state(QpState.INIT);
                optional(a, t, i, in, opt);
                if ((opt & QpModifyLayouts.OPTPAR_PRI_PORT) != 0) {
                    a.port(port(i, in));
                }
                break;
            case CmdOpcode.INIT2RTR_QP:
                from = QpState.INIT;
                a.state(QpState.RTR);
                if (t != QpType.UD) {
                    long mtu = in.get(i, 0, Q + "mtu");
                    if (mtu < QpLayouts.MTU_256 || mtu > QpLayouts.MTU_4096) {
                        throw CmdError.badParam(CmdSyndromes.QP_BAD_MTU, "qpc.mtu " + mtu + " (" + QpLayouts.MTU_256
                                + " = 256 .. " + QpLayouts.MTU_4096 + " = 4096)");
                    }
                    a.ah(path(i, in, st)).pathMtu(Mtu.of((int) mtu)).destQpn((int) in.get(i, 0, Q + "remote_qpn"))
                            .rqPsn((int) in.get(i, 0, Q + "next_rcv_psn"));
                    if (t == QpType.RC) {
                        int rra = (int) in.get(i, 0, Q + "log_rra_max");
                        if (rra > ModelCaps.LOG_MAX_RA_RES_QP) {
                            throw CmdError.badParam(CmdSyndromes.QP_BAD_RD_ATOMIC, "log_rra_max " + rra + " > "
                                    + ModelCaps.LOG_MAX_RA_RES_QP);
                        }
                        a.maxDestRdAtomic(1 << rra).minRnrTimer((int) in.get(i, 0, Q + "min_rnr_nak"));
                    }
                }
                optional(a, t, i, in, opt);
                break;
            case CmdOpcode.RTR2RTS_QP:
                from = QpState.RTR;
                a.state(QpState.RTS).sqPsn((int) in.get(i, 0, Q + "next_send_psn"));
                if (t == QpType.RC) {
                    int sra = (int) in.get(i, 0, Q + "log_sra_max");
                    if (sra > ModelCaps.LOG_MAX_RA_REQ_QP) {
                        throw CmdError.badParam(CmdSyndromes.QP_BAD_RD_ATOMIC, "log_sra_max " + sra + " > "
                                + ModelCaps.LOG_MAX_RA_REQ_QP);
                    }
                    a.timeout((int) in.get(i, 0, P + "ack_timeout")).retryCnt((int) in.get(i, 0, Q + "retry_count"))
                            .rnrRetry((int) in.get(i, 0, Q + "rnr_retry")).maxRdAtomic(1 << sra);
                }
                optional(a, t, i, in, opt);
                break;
            case CmdOpcode.RTS2RTS_QP:
                from = QpState.RTS;
                a.state(QpState.RTS);
                optional(a, t, i, in, opt);
                break;
            default:
                throw new IllegalArgumentException("not a qpc transition: " + CmdOpcode.name(opcode));
        }
        // keep only what the IBTA table accepts for this transport (e.g. no PKEY_INDEX on RTR->RTS)
        QpState to = a.state();
        int allowed = QpTransitions.requiredMask(t, from, to) | QpTransitions.optionalMask(t, from, to);
        return a.without(a.mask() & ~allowed);
    }

    private static void optional(QpAttributes a, QpType t, DirectBuffer i, Layout in, int opt) throws CmdError {
        if (t != QpType.UD && (opt & ACCESS_OPTS) != 0) {
            a.accessFlags(access(i, in));
        }
        if ((opt & QpModifyLayouts.OPTPAR_PKEY_INDEX) != 0) {
            a.pkeyIndex((int) in.get(i, 0, P + "pkey_index"));
        }
        if (t == QpType.UD && (opt & QpModifyLayouts.OPTPAR_Q_KEY) != 0) {
            a.qkey((int) in.get(i, 0, Q + "q_key"));
        }
        if (t == QpType.RC && (opt & QpModifyLayouts.OPTPAR_RNR_TIMEOUT) != 0) {
            a.minRnrTimer((int) in.get(i, 0, Q + "min_rnr_nak"));
        }
    }

    private static int access(DirectBuffer i, Layout in) {
        return (in.get(i, 0, Q + "rre") != 0 ? Access.REMOTE_READ.bit() : 0)
                | (in.get(i, 0, Q + "rwe") != 0 ? Access.REMOTE_WRITE.bit() : 0)
                | (in.get(i, 0, Q + "rae") != 0 ? Access.REMOTE_ATOMIC.bit() : 0);
    }

    /** vhca_port_num: 0 (unset) or 1, the model's only port. */
    private static int port(DirectBuffer i, Layout in) throws CmdError {
        long p = in.get(i, 0, P + "vhca_port_num");
        if (p > 1) {
            throw CmdError.badParam(CmdSyndromes.QP_BAD_PORT, "vhca_port_num " + p + ": the device has one port");
        }
        return 1;
    }

    /**
     * The primary address path as a verbs address vector: destination GID from rgid_rip, the source GID must be an
     * entry the driver programmed with SET_ROCE_ADDRESS and must be the port's address (the wire sends from it).
     */
    private static AhAttributes path(DirectBuffer i, Layout in, DeviceState st) throws CmdError {
        byte[] dgid = new byte[Gid.LENGTH];
        in.field(P + "rgid_rip").getBytes(i, 0, dgid);
        Gid d = Gid.of(dgid);
        if (d.isZero()) {
            throw CmdError.badParam(CmdSyndromes.QP_BAD_PATH, "primary path without a destination GID");
        }
        int sgid = (int) in.get(i, 0, P + "src_addr_index");
        byte[] g = sgid < st.gids.length ? st.gids[sgid] : null;
        if (g == null || !Gid.of(g).equals(st.portGid)) {
            throw CmdError.badParam(CmdSyndromes.QP_BAD_GID_INDEX, "src_addr_index " + sgid
                    + (g == null ? " is not programmed (SET_ROCE_ADDRESS)" : " is not the port's address "
                    + st.portAddress.getHostAddress()));
        }
        return AhAttributes.to(d).sgidIndex(RxeMirror.PORT_GID_INDEX)
                .hopLimit((int) in.get(i, 0, P + "hop_limit"))
                .trafficClass((int) in.get(i, 0, P + "tclass"))
                .flowLabel((int) in.get(i, 0, P + "flow_label"))
                .sl((int) in.get(i, 0, P + "sl"));
    }
}
