package io.jhca.pci;

/** Names of common PCI classes as lspci prints them (pciutils' pci.ids, class section). */
final class PciClassNames {

    private PciClassNames() {
    }

    static String name(final int classCode) {
        final int id = classCode >>> 8;
        switch (id) {
            case 0x0100: return "SCSI storage controller";
            case 0x0101: return "IDE interface";
            case 0x0106: return "SATA controller";
            case 0x0108: return "Non-Volatile memory controller";
            case 0x0200: return "Ethernet controller";
            case 0x0207: return "Infiniband controller";
            case 0x0280: return "Network controller";
            case 0x0300: return "VGA compatible controller";
            case 0x0403: return "Audio device";
            case 0x0500: return "RAM memory";
            case 0x0600: return "Host bridge";
            case 0x0601: return "ISA bridge";
            case 0x0604: return "PCI bridge";
            case 0x0680: return "Bridge";
            case 0x0700: return "Serial controller";
            case 0x0780: return "Communication controller";
            case 0x0880: return "System peripheral";
            case 0x0c03: return "USB controller";
            case 0x0c05: return "SMBus";
            case 0x1200: return "Processing accelerators";
            case 0xffff: return "Unassigned class";
            default:
                break;
        }
        switch (id >>> 8) {
            case 0x00: return "Unclassified device";
            case 0x01: return "Mass storage controller";
            case 0x02: return "Network controller";
            case 0x03: return "Display controller";
            case 0x04: return "Multimedia controller";
            case 0x05: return "Memory controller";
            case 0x06: return "Bridge";
            case 0x07: return "Communication controller";
            case 0x08: return "Generic system peripheral";
            case 0x0c: return "Serial bus controller";
            default: return "Class " + String.format("%04x", id);
        }
    }
}
