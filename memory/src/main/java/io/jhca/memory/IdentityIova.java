package io.jhca.memory;

/** iova == virtual address: for software providers and kernel-registered memory. Stateless. */
public final class IdentityIova implements IovaTranslator {

    /** The one instance. */
    public static final IdentityIova INSTANCE = new IdentityIova();

    private IdentityIova() {
    }

    @Override
    public long toIova(final long virtualAddress) {
        return virtualAddress;
    }

    @Override
    public String name() {
        return "identity";
    }

    @Override
    public String toString() {
        return name();
    }
}
