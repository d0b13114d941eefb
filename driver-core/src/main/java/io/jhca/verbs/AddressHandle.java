package io.jhca.verbs;

/** An address handle ({@code struct ibv_ah}): a UD destination. Providers subclass it to keep their format. */
public abstract class AddressHandle extends VerbsResource {
    private final ProtectionDomain pd;
    private final AhAttributes attributes;

    protected AddressHandle(ProtectionDomain pd, AhAttributes attributes) {
        super("AH", pd);
        this.pd = pd;
        this.attributes = attributes;
    }

    public final ProtectionDomain pd() {
        return pd;
    }

    /** The address vector (do not change it: it was copied at creation). */
    public final AhAttributes attributes() {
        return attributes;
    }
}
