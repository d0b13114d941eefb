package io.jhca.verbs;

/**
 * An address vector ({@code struct ibv_ah_attr} with its GRH): where a QP sends. On RoCEv2 the GRH is
 * mandatory: the destination GID is the peer's IP address, the source GID index picks ours.
 */
public final class AhAttributes {
    private Gid dgid = Gid.ZERO;
    private int sgidIndex;
    private int hopLimit = 64;
    private int trafficClass;
    private int flowLabel;
    private int sl;
    private int portNum = 1;
    private int dlid;

    public static AhAttributes to(Gid dgid) {
        return new AhAttributes().dgid(dgid);
    }

    public AhAttributes dgid(Gid gid) {
        this.dgid = gid;
        return this;
    }

    public AhAttributes sgidIndex(int index) {
        this.sgidIndex = index;
        return this;
    }

    public AhAttributes hopLimit(int hopLimit) {
        this.hopLimit = hopLimit;
        return this;
    }

    public AhAttributes trafficClass(int trafficClass) {
        this.trafficClass = trafficClass;
        return this;
    }

    public AhAttributes flowLabel(int flowLabel) {
        this.flowLabel = flowLabel;
        return this;
    }

    public AhAttributes sl(int sl) {
        this.sl = sl;
        return this;
    }

    public AhAttributes portNum(int portNum) {
        this.portNum = portNum;
        return this;
    }

    public AhAttributes dlid(int dlid) {
        this.dlid = dlid;
        return this;
    }

    public Gid dgid() {
        return dgid;
    }

    public int sgidIndex() {
        return sgidIndex;
    }

    public int hopLimit() {
        return hopLimit;
    }

    public int trafficClass() {
        return trafficClass;
    }

    public int flowLabel() {
        return flowLabel;
    }

    public int sl() {
        return sl;
    }

    public int portNum() {
        return portNum;
    }

    public int dlid() {
        return dlid;
    }

    /**
     * True if this vector names a multicast group (a multicast destination GID): a UD send through it goes to
     * every QP attached to the group, and its work request names QPN 0xFFFFFF (IBTA 10.5.2.1).
     */
    public boolean isMulticast() {
        return dgid.isMulticast();
    }

    public AhAttributes copy() {
        AhAttributes c = new AhAttributes();
        c.dgid = dgid;
        c.sgidIndex = sgidIndex;
        c.hopLimit = hopLimit;
        c.trafficClass = trafficClass;
        c.flowLabel = flowLabel;
        c.sl = sl;
        c.portNum = portNum;
        c.dlid = dlid;
        return c;
    }

    /** Range checks shared by every provider (port, GID index, hop limit, traffic class, flow label, SL). */
    void validate(Context ctx) {
        int ports = ctx.queryDevice().physPortCnt();
        if (portNum < 1 || portNum > ports) {
            throw new VerbsException(VerbsException.EINVAL, "address vector: port " + portNum + " out of range 1.." + ports);
        }
        int gids = ctx.queryPort(portNum).gidTblLen();
        if (sgidIndex < 0 || sgidIndex >= gids) {
            throw new VerbsException(VerbsException.EINVAL,
                    "address vector: sgid_index " + sgidIndex + " out of range 0.." + (gids - 1));
        }
        if (ctx.queryGid(portNum, sgidIndex).isZero()) {
            throw new VerbsException(VerbsException.EINVAL, "address vector: GID index " + sgidIndex + " is empty");
        }
        if (dgid.isZero()) {
            throw new VerbsException(VerbsException.EINVAL, "address vector: no destination GID (RoCE needs a GRH)");
        }
        if (hopLimit < 0 || hopLimit > 255 || trafficClass < 0 || trafficClass > 255 || sl < 0 || sl > 15
                || flowLabel < 0 || flowLabel > 0xFFFFF) {
            throw new VerbsException(VerbsException.EINVAL, "address vector: hop_limit/traffic_class/sl/flow_label out of range");
        }
    }

    @Override
    public String toString() {
        return "AV{dgid=" + dgid + ", sgid_index=" + sgidIndex + ", hop_limit=" + hopLimit + ", tclass=" + trafficClass
                + ", flow_label=" + flowLabel + ", sl=" + sl + ", port=" + portNum + "}";
    }
}
