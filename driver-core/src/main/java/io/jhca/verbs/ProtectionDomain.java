package io.jhca.verbs;

import io.jhca.memory.DmaRegion;

/**
 * A protection domain ({@code struct ibv_pd}): memory registered in it is reachable only by QPs of the same PD.
 * Registration, QP and AH creation are checked here, once for every provider.
 */
public abstract class ProtectionDomain extends VerbsResource {
    private final Context context;

    protected ProtectionDomain(Context context) {
        super("PD", context);
        this.context = context;
    }

    public final Context context() {
        return context;
    }

    /** Registers a whole region. */
    public final MemoryRegion register(DmaRegion region, Access... access) {
        if (region.isClosed()) {
            throw new VerbsException(VerbsException.EINVAL, "register MR: the DMA region is closed");
        }
        return register(region, 0, region.length(), Access.mask(access));
    }

    /**
     * Registers {@code [offset, offset + length)} of a region with an {@link Access} mask. As in verbs, remote
     * write or remote atomic access requires local write.
     */
    public final MemoryRegion register(DmaRegion region, long offset, long length, int accessMask) {
        checkOpen();
        if (region.isClosed()) {
            throw new VerbsException(VerbsException.EINVAL, "register MR: the DMA region is closed");
        }
        if ((accessMask & ~Access.ALL) != 0) {
            throw new VerbsException(VerbsException.EINVAL, "register MR: unknown access bits 0x"
                    + Integer.toHexString(accessMask & ~Access.ALL));
        }
        if ((Access.has(accessMask, Access.REMOTE_WRITE) || Access.has(accessMask, Access.REMOTE_ATOMIC))
                && !Access.has(accessMask, Access.LOCAL_WRITE)) {
            // IBTA 10.6.3.1 / ibv_reg_mr(3): remote write or atomic without local write is EINVAL.
            throw new VerbsException(VerbsException.EINVAL,
                    "register MR: REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE");
        }
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new VerbsException(VerbsException.EINVAL, "register MR: [" + offset + ", " + offset + "+" + length
                    + ") is outside the region of " + region.length() + " bytes");
        }
        long max = context.queryDevice().maxMrSize();
        if (length > max) {
            throw new VerbsException(VerbsException.EINVAL, "register MR: length " + length + " exceeds max_mr_size " + max);
        }
        return driverRegister(region, offset, length, accessMask);
    }

    public final QueuePair createQp(QpInitAttributes init) {
        checkOpen();
        if (init.sendCq().context() != context || init.recvCq().context() != context) {
            throw new VerbsException(VerbsException.EINVAL, "create QP: CQ belongs to another device");
        }
        if (init.isGsi() && !context.supportsGsi()) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "create QP: " + context.name()
                    + " has no GSI QP (QP1)");
        }
        QpCapabilities caps = init.capabilities();
        SharedReceiveQueue srq = init.srq();
        if (srq != null) {
            if (srq.pd().context() != context) {
                throw new VerbsException(VerbsException.EINVAL, "create QP: " + srq.describe() + " belongs to another device");
            }
            if (init.type() != QpType.RC && init.type() != QpType.UD) {
                throw new VerbsException(VerbsException.EINVAL, "create QP: a " + init.type()
                        + " QP cannot take its receives from an SRQ (RC and UD can)");
            }
            srq.checkOpen();
            // ibv_create_qp(3): with an SRQ the receive queue sizes are ignored; the QP has no receive queue
            caps = new QpCapabilities(caps.maxSendWr(), 0, caps.maxSendSge(), 0, caps.maxInlineData());
        }
        caps.checkAgainst(context.queryDevice());
        return driverCreateQp(init, caps);
    }

    /**
     * A shared receive queue ({@code ibv_create_srq}): max_wr 1..max_srq_wr, max_sge 1..max_srq_sge, srq_limit
     * 0..max_wr (armed at once when not 0).
     */
    public final SharedReceiveQueue createSrq(SrqInitAttributes init) {
        checkOpen();
        DeviceAttributes dev = context.queryDevice();
        if (dev.maxSrq() == 0) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "create SRQ: " + context.describe() + " has no SRQs");
        }
        if (init.maxWr() < 1 || init.maxWr() > dev.maxSrqWr()) {
            throw new VerbsException(VerbsException.EINVAL, "create SRQ: max_wr " + init.maxWr() + " out of range 1.."
                    + dev.maxSrqWr());
        }
        if (init.maxSge() < 1 || init.maxSge() > dev.maxSrqSge()) {
            throw new VerbsException(VerbsException.EINVAL, "create SRQ: max_sge " + init.maxSge() + " out of range 1.."
                    + dev.maxSrqSge());
        }
        if (init.srqLimit() < 0 || init.srqLimit() > init.maxWr()) {
            throw new VerbsException(VerbsException.EINVAL, "create SRQ: srq_limit " + init.srqLimit()
                    + " out of range 0.." + init.maxWr());
        }
        SharedReceiveQueue srq = driverCreateSrq(init);
        if (init.srqLimit() > 0) {
            srq.modify(SrqAttributes.limit(init.srqLimit()), SrqAttributes.LIMIT);
        }
        return srq;
    }

    public final AddressHandle createAh(AhAttributes attributes) {
        checkOpen();
        attributes.validate(context);
        return driverCreateAh(attributes.copy());
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}): EOPNOTSUPP if the device does not offer the type
     * (device_cap_flags MEM_WINDOW, MEM_WINDOW_TYPE_2A/2B).
     */
    public final MemoryWindow allocMw(MwType type) {
        checkOpen();
        if (type == null) {
            throw new VerbsException(VerbsException.EINVAL, "alloc MW: no window type");
        }
        if (!context.queryDevice().supports(type)) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "alloc MW: " + context.describe()
                    + " does not offer " + type + " memory windows");
        }
        return driverAllocMw(type);
    }

    /** Provider side: allocate a window of a type the device offers. */
    protected MemoryWindow driverAllocMw(MwType type) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "alloc MW: not implemented by this provider");
    }

    protected abstract MemoryRegion driverRegister(DmaRegion region, long offset, long length, int accessMask);

    /** Create the QP; {@code requested} is within device limits, the provider may round up. */
    protected abstract QueuePair driverCreateQp(QpInitAttributes init, QpCapabilities requested);

    protected abstract AddressHandle driverCreateAh(AhAttributes attributes);

    /** Create the SRQ; {@code init} is within device limits, the provider may round the depth up. */
    protected SharedReceiveQueue driverCreateSrq(SrqInitAttributes init) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "create SRQ: not supported by " + context.describe());
    }
}
