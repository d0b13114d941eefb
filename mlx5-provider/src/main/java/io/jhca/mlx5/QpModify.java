package io.jhca.mlx5;

import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_ACK_TIMEOUT;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_ALT_ADDR_PATH;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_CQN_RCV;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_PKEY_INDEX;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_PM_STATE;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_PRIMARY_ADDR_PATH;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_PRI_PORT;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_Q_KEY;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RAE;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RETRY_COUNT;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RNR_RETRY;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RNR_TIMEOUT;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RRA_MAX;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RRE;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_RWE;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_SRA_MAX;
import static io.jhca.mlx5.cmd.QpModifyLayouts.OPTPAR_SRQN;

import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.VerbsException;

/**
 * The modify-QP commands, with the qpc fields the kernel's mlx5_ib sets for each ({@code __mlx5_ib_modify_qp},
 * {@code mlx5_set_path}, {@code set_qpc_atomic_flags}):
 * <ul>
 * <li>always: st, pm_state MIGRATED, pd, cqn_snd, cqn_rcv, log_ack_req_freq 8; UD: mtu 4096 and log_msg_max 12;</li>
 * <li>PATH_MTU: mtu and log_msg_max = cap log_max_msg; DEST_QPN: remote_qpn; PKEY_INDEX, PORT: the primary path's
 *     pkey_index and vhca_port_num; AV: the RoCE address path ({@link Mlx5Path}); TIMEOUT: ack_timeout;</li>
 * <li>RETRY_CNT, RNR_RETRY: retry_count, rnr_retry; MAX_QP_RD_ATOMIC / MAX_DEST_RD_ATOMIC (non-zero): log_sra_max /
 *     log_rra_max = ilog2; SQ_PSN / RQ_PSN: next_send_psn / next_rcv_psn; MIN_RNR_TIMER: min_rnr_nak; QKEY: q_key;</li>
 * <li>ACCESS_FLAGS or MAX_DEST_RD_ATOMIC: rre, rwe, rae (+ atomic_mode IB_COMP), where read and atomic are dropped
 *     while max_dest_rd_atomic is 0;</li>
 * <li>RESET to INIT of a QP with an RQ: dbr_addr;</li>
 * <li>opt_param_mask: the optional attributes given, mapped to MLX5_QP_OPTPAR_* and filtered by the kernel's
 *     {@code opt_mask} table of the transition and QP type.</li>
 * </ul>
 * 2ERR and 2RST carry only the QPN. RTS to SQD and SQD to RTS have no mlx5 command in mlx5_ib (its optab) and are
 * refused.
 */
final class QpModify {

    /** mlx5_ib MLX5_IB_ACK_REQ_FREQ. */
    static final int ACK_REQ_FREQ = 8;
    /** log_msg_max of a UD QP (mlx5_ib: 12, with mtu 4096). */
    static final int UD_LOG_MSG_MAX = 12;

    private QpModify() {
    }

    /** The command for a transition, or -1 if mlx5 has none (kernel mlx5_ib optab). */
    static int opcode(QpState cur, QpState next) {
        if (next == QpState.RESET) {
            return CmdOpcode.QP_2RST;
        }
        if (next == QpState.ERR) {
            return CmdOpcode.QP_2ERR;
        }
        if (cur == QpState.RESET && next == QpState.INIT) {
            return CmdOpcode.RST2INIT_QP;
        }
        if (cur == QpState.INIT && next == QpState.INIT) {
            return CmdOpcode.INIT2INIT_QP;
        }
        if (cur == QpState.INIT && next == QpState.RTR) {
            return CmdOpcode.INIT2RTR_QP;
        }
        if (cur == QpState.RTR && next == QpState.RTS) {
            return CmdOpcode.RTR2RTS_QP;
        }
        if (cur == QpState.RTS && next == QpState.RTS) {
            return CmdOpcode.RTS2RTS_QP;
        }
        if (cur == QpState.SQE && next == QpState.RTS) {
            return CmdOpcode.SQERR2RTS_QP;
        }
        return -1;
    }

    static int qpcSt(QpType t) {
        switch (t) {
            case RC: return QpLayouts.ST_RC;
            case UC: return QpLayouts.ST_UC;
            default: return QpLayouts.ST_UD;
        }
    }

    /** mlx5_ib ib_nr_to_mlx5_nr, bit by bit. */
    static int optparOf(int mask) {
        int o = 0;
        if ((mask & QpAttrMask.ACCESS_FLAGS) != 0) {
            o |= OPTPAR_RWE | OPTPAR_RRE | OPTPAR_RAE;
        }
        if ((mask & QpAttrMask.PKEY_INDEX) != 0) {
            o |= OPTPAR_PKEY_INDEX;
        }
        if ((mask & QpAttrMask.PORT) != 0) {
            o |= OPTPAR_PRI_PORT;
        }
        if ((mask & QpAttrMask.QKEY) != 0) {
            o |= OPTPAR_Q_KEY;
        }
        if ((mask & QpAttrMask.AV) != 0) {
            o |= OPTPAR_PRIMARY_ADDR_PATH | OPTPAR_PRI_PORT;
        }
        if ((mask & QpAttrMask.TIMEOUT) != 0) {
            o |= OPTPAR_ACK_TIMEOUT;
        }
        if ((mask & QpAttrMask.RETRY_CNT) != 0) {
            o |= OPTPAR_RETRY_COUNT;
        }
        if ((mask & QpAttrMask.RNR_RETRY) != 0) {
            o |= OPTPAR_RNR_RETRY;
        }
        if ((mask & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) {
            o |= OPTPAR_SRA_MAX;
        }
        if ((mask & QpAttrMask.ALT_PATH) != 0) {
            o |= OPTPAR_ALT_ADDR_PATH;
        }
        if ((mask & QpAttrMask.MIN_RNR_TIMER) != 0) {
            o |= OPTPAR_RNR_TIMEOUT;
        }
        if ((mask & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) {
            o |= OPTPAR_RRA_MAX | OPTPAR_RWE | OPTPAR_RRE | OPTPAR_RAE;
        }
        if ((mask & QpAttrMask.PATH_MIG_STATE) != 0) {
            o |= OPTPAR_PM_STATE;
        }
        return o;
    }

    /** mlx5_ib {@code opt_mask[cur][next][st]}: the optional parameters a transition accepts, per QP type. */
    static int optMask(QpState cur, QpState next, QpType t) {
        if (cur == QpState.INIT && next == QpState.INIT) {
            switch (t) {
                case RC: return OPTPAR_RRE | OPTPAR_RAE | OPTPAR_RWE | OPTPAR_PKEY_INDEX | OPTPAR_PRI_PORT;
                case UC: return OPTPAR_RWE | OPTPAR_PKEY_INDEX | OPTPAR_PRI_PORT;
                default: return OPTPAR_PKEY_INDEX | OPTPAR_Q_KEY | OPTPAR_PRI_PORT;
            }
        }
        if (cur == QpState.INIT && next == QpState.RTR) {
            switch (t) {
                case RC: return OPTPAR_ALT_ADDR_PATH | OPTPAR_RRE | OPTPAR_RAE | OPTPAR_RWE | OPTPAR_PKEY_INDEX;
                case UC: return OPTPAR_ALT_ADDR_PATH | OPTPAR_RWE | OPTPAR_PKEY_INDEX;
                default: return OPTPAR_PKEY_INDEX | OPTPAR_Q_KEY;
            }
        }
        if (cur == QpState.RTR && next == QpState.RTS) {
            switch (t) {
                case RC: return OPTPAR_ALT_ADDR_PATH | OPTPAR_RRE | OPTPAR_RAE | OPTPAR_RWE | OPTPAR_PM_STATE
                        | OPTPAR_RNR_TIMEOUT;
                case UC: return OPTPAR_ALT_ADDR_PATH | OPTPAR_RWE | OPTPAR_PM_STATE;
                default: return OPTPAR_Q_KEY;
            }
        }
        if (cur == QpState.RTS && next == QpState.RTS) {
            switch (t) {
                case RC: return OPTPAR_RRE | OPTPAR_RAE | OPTPAR_RWE | OPTPAR_RNR_TIMEOUT | OPTPAR_PM_STATE
                        | OPTPAR_ALT_ADDR_PATH;
                case UC: return OPTPAR_RWE | OPTPAR_PM_STATE | OPTPAR_ALT_ADDR_PATH;
                default: return OPTPAR_Q_KEY | OPTPAR_SRQN | OPTPAR_CQN_RCV;
            }
        }
        if (cur == QpState.SQE && next == QpState.RTS) {
            switch (t) {
                case RC: return OPTPAR_RNR_TIMEOUT | OPTPAR_RWE | OPTPAR_RAE | OPTPAR_RRE;
                case UC: return OPTPAR_RWE;
                default: return OPTPAR_Q_KEY;
            }
        }
        return 0;
    }

    private static Layout[] layouts(int opcode) {
        switch (opcode) {
            case CmdOpcode.RST2INIT_QP: return new Layout[] {QpLayouts.RST2INIT_QP_IN, QpLayouts.RST2INIT_QP_OUT};
            case CmdOpcode.INIT2INIT_QP: return new Layout[] {QpModifyLayouts.INIT2INIT_QP_IN, QpModifyLayouts.INIT2INIT_QP_OUT};
            case CmdOpcode.INIT2RTR_QP: return new Layout[] {QpLayouts.INIT2RTR_QP_IN, QpLayouts.INIT2RTR_QP_OUT};
            case CmdOpcode.RTR2RTS_QP: return new Layout[] {QpLayouts.RTR2RTS_QP_IN, QpLayouts.RTR2RTS_QP_OUT};
            case CmdOpcode.RTS2RTS_QP: return new Layout[] {QpModifyLayouts.RTS2RTS_QP_IN, QpModifyLayouts.RTS2RTS_QP_OUT};
            case CmdOpcode.SQERR2RTS_QP: return new Layout[] {QpModifyLayouts.SQERR2RTS_QP_IN, QpModifyLayouts.SQERR2RTS_QP_OUT};
            case CmdOpcode.QP_2ERR: return new Layout[] {QpLayouts.QP_2ERR_IN, QpLayouts.QP_2ERR_OUT};
            case CmdOpcode.QP_2RST: return new Layout[] {QpLayouts.QP_2RST_IN, QpLayouts.QP_2RST_OUT};
            default: throw new IllegalArgumentException("no modify layout for opcode 0x" + Integer.toHexString(opcode));
        }
    }

    /** The command for a checked transition of {@code qp} from {@code cur} to {@code next}. */
    static PrmCommand build(Mlx5Qp qp, QpAttributes a, QpState cur, QpState next) {
        int opcode = opcode(cur, next);
        if (opcode < 0) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "modify " + qp.describe() + " " + cur + "->" + next
                    + ": mlx5 has no command for this transition");
        }
        Layout[] l = layouts(opcode);
        PrmCommand c = PrmCommand.of(opcode, l[0], l[1]).set("qpn", qp.qpn());
        if (opcode == CmdOpcode.QP_2ERR || opcode == CmdOpcode.QP_2RST) {
            return c;
        }
        int mask = a.mask();
        QpAttributes now = qp.attributesNow();
        QpType type = qp.type();
        // QPN 1 is only ever the GSI QP, which keeps its service type QP1 through every transition
        c.set("qpc.st", qp.qpn() == 1 ? QpLayouts.ST_QP1 : qpcSt(type)).set("qpc.pm_state", QpLayouts.PM_STATE_MIGRATED);
        if (type == QpType.UD) {
            c.set("qpc.mtu", QpLayouts.MTU_4096).set("qpc.log_msg_max", UD_LOG_MSG_MAX);
        } else if (a.has(QpAttrMask.PATH_MTU)) {
            c.set("qpc.mtu", a.pathMtu().value()).set("qpc.log_msg_max", qp.caps().logMaxMsg());
        }
        if (a.has(QpAttrMask.DEST_QPN)) {
            c.set("qpc.remote_qpn", a.destQpn());
        }
        String path = "qpc.primary_address_path.";
        if (a.has(QpAttrMask.PKEY_INDEX)) {
            c.set(path + "pkey_index", a.pkeyIndex());
        }
        int port = a.has(QpAttrMask.PORT) ? a.port() : now.port();
        if (a.has(QpAttrMask.PORT)) {
            c.set(path + "vhca_port_num", a.port());
        }
        if (a.has(QpAttrMask.AV)) {
            AhAttributes ah = a.ah();
            int sport = -1;
            if (type != QpType.UD && a.has(QpAttrMask.DEST_QPN)) {
                int fl = ah.flowLabel() != 0 ? ah.flowLabel() : Mlx5Path.flowLabelOfQpns(qp.qpn(), a.destQpn());
                sport = Mlx5Path.udpSportOfFlowLabel(fl);
            }
            Mlx5Path.set(c.input(), path, ah, port, sport);
        }
        if (a.has(QpAttrMask.TIMEOUT)) {
            c.set(path + "ack_timeout", a.timeout());
        }
        c.set("qpc.pd", qp.pdn()).set("qpc.cqn_snd", qp.sendCqn()).set("qpc.cqn_rcv", qp.recvCqn())
                .set("qpc.log_ack_req_freq", ACK_REQ_FREQ);
        if (a.has(QpAttrMask.RNR_RETRY)) {
            c.set("qpc.rnr_retry", a.rnrRetry());
        }
        if (a.has(QpAttrMask.RETRY_CNT)) {
            c.set("qpc.retry_count", a.retryCnt());
        }
        if (a.has(QpAttrMask.MAX_QP_RD_ATOMIC) && a.maxRdAtomic() > 0) {
            c.set("qpc.log_sra_max", ilog2(a.maxRdAtomic()));
        }
        if (a.has(QpAttrMask.SQ_PSN)) {
            c.set("qpc.next_send_psn", a.sqPsn());
        }
        if (a.has(QpAttrMask.MAX_DEST_RD_ATOMIC) && a.maxDestRdAtomic() > 0) {
            c.set("qpc.log_rra_max", ilog2(a.maxDestRdAtomic()));
        }
        if ((mask & (QpAttrMask.ACCESS_FLAGS | QpAttrMask.MAX_DEST_RD_ATOMIC)) != 0) {
            // set_qpc_atomic_flags: without responder resources only remote write stays
            int dest = a.has(QpAttrMask.MAX_DEST_RD_ATOMIC) ? a.maxDestRdAtomic() : now.maxDestRdAtomic();
            int access = a.has(QpAttrMask.ACCESS_FLAGS) ? a.accessFlags() : now.accessFlags();
            if (dest == 0) {
                access &= Access.REMOTE_WRITE.bit();
            }
            c.set("qpc.rre", Access.has(access, Access.REMOTE_READ));
            if (Access.has(access, Access.REMOTE_ATOMIC)) {
                c.set("qpc.rae", 1).set("qpc.atomic_mode", QpModifyLayouts.ATOMIC_MODE_IB_COMP);
            }
            c.set("qpc.rwe", Access.has(access, Access.REMOTE_WRITE));
        }
        if (a.has(QpAttrMask.MIN_RNR_TIMER)) {
            c.set("qpc.min_rnr_nak", a.minRnrTimer());
        }
        if (a.has(QpAttrMask.RQ_PSN)) {
            c.set("qpc.next_rcv_psn", a.rqPsn());
        }
        if (a.has(QpAttrMask.QKEY)) {
            c.set("qpc.q_key", Integer.toUnsignedLong(a.qkey()));
        }
        if (opcode == CmdOpcode.RST2INIT_QP && qp.recvRing() != null) {
            c.set("qpc.dbr_addr", qp.dbrIova());
        }
        if (opcode == CmdOpcode.RST2INIT_QP && qp.counterSetId() >= 0) {
            // mlx5_ib __mlx5_ib_modify_qp: the QP joins its port's Q counter set on RESET->INIT only
            c.set("qpc.counter_set_id", qp.counterSetId());
        }
        if (opcode != CmdOpcode.RST2INIT_QP) {
            c.set("opt_param_mask", optparOf(mask) & optMask(cur, next, type));
        }
        return c;
    }

    private static int ilog2(int v) {
        return 31 - Integer.numberOfLeadingZeros(v);
    }
}
