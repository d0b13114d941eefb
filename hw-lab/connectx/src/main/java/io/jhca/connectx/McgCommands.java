package io.jhca.connectx;

import org.agrona.DirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.verbs.Gid;
import io.jhca.verbs.QpType;
import io.jhca.verbs.VerbsException;

/**
 * ATTACH_TO_MCG / DETACH_FROM_MCG: the model attaches the QP's rxe mirror to the group, so the wire side joins the
 * IP group on the port's interface with the group's first QP and leaves it with the last, and every datagram for
 * the group reaches every attached QP of the function as a receive (mlx5_ifc.h {@code attach_to_mcg_in}). Only UD
 * QPs and multicast GIDs are taken, as the device does; attaching twice is no error, detaching a group the QP is
 * not in is a bad parameter.
 */
final class McgCommands {

    private final QpCommands qps;

    McgCommands(QpCommands qps) {
        this.qps = qps;
    }

    void attach(DirectBuffer i, Layout in) throws CmdError {
        DeviceQp qp = udQp(i, in);
        Gid mgid = gid(i, in);
        try {
            qp.rxeQp.attachMcast(mgid, 0);
        } catch (VerbsException e) {
            if (e.errno() == VerbsException.ENOMEM) {
                throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, e.getMessage());
            }
            throw CmdError.badParam(CmdSyndromes.MCG_BAD_GID, e.getMessage());
        }
    }

    void detach(DirectBuffer i, Layout in) throws CmdError {
        DeviceQp qp = udQp(i, in);
        Gid mgid = gid(i, in);
        if (!qp.rxeQp.multicastGroups().contains(mgid)) {
            throw CmdError.badParam(CmdSyndromes.MCG_NOT_ATTACHED, "QP 0x" + Integer.toHexString(qp.qpn)
                    + " is not attached to " + mgid);
        }
        qp.rxeQp.detachMcast(mgid, 0);
    }

    /** Before the QP goes: it leaves its groups (its mirror cannot close while attached). */
    static void detachAll(DeviceQp qp) {
        for (Gid g : qp.rxeQp.multicastGroups()) {
            qp.rxeQp.detachMcast(g, 0);
        }
    }

    private DeviceQp udQp(DirectBuffer i, Layout in) throws CmdError {
        DeviceQp qp = qps.qp(in.get(i, 0, "qpn"));
        if (qp.type != QpType.UD) {
            throw CmdError.badParam(CmdSyndromes.QP_TYPE, "QP 0x" + Integer.toHexString(qp.qpn) + " is " + qp.type
                    + ": only UD QPs join multicast groups");
        }
        return qp;
    }

    private static Gid gid(DirectBuffer i, Layout in) throws CmdError {
        byte[] g = new byte[Gid.LENGTH];
        in.field("multicast_gid").getBytes(i, 0, g);
        Gid mgid = Gid.of(g);
        if (!mgid.isMulticast()) {
            throw CmdError.badParam(CmdSyndromes.MCG_BAD_GID, mgid + " is not a multicast GID");
        }
        return mgid;
    }
}
