import { describe, expect, it } from 'vitest';
import { Admission, peerOf } from './admission.js';

const peer = (remoteAddress: string | undefined): string => peerOf({ remoteAddress });

describe('peerOf', () => {
  it('counts IPv4 by address and IPv6 by its /64', () => {
    expect(peer('192.0.2.7')).toBe('192.0.2.7');
    expect(peer('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(peer('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(peer('2001:0db8:0000:0001:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(peer('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(peer('::1')).toBe('0:0:0:0::/64');
    expect(peer('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(peer('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(peer(undefined)).toBe('unknown');
    expect(peer('not:an::add::ress')).toBe('not:an::add::ress');
  });
});

describe('Admission', () => {
  it('keeps a controller’s fresh connection when one IPv6 machine opens each connection from a new address of its /64', () => {
    const a = new Admission({ maxUnauthenticated: 320, maxPerPeer: 128 });
    let controllerEvicted = false;
    const controller = {};
    a.admit(controller, peer('192.0.2.10'), () => {
      controllerEvicted = true;
    });
    // Old code counted each address on its own: every attacker address held one connection, none was
    // "the heaviest", and the oldest (the controller's) was closed after 320 newer ones.
    for (let i = 1; i <= 1000; i++) a.admit({}, peer(`2001:db8:0:7::${i.toString(16)}`), () => {});
    expect(controllerEvicted).toBe(false);
    expect(a.heldBy('2001:db8:0:7::/64')).toBe(128);
    expect(a.heldBy('192.0.2.10')).toBe(1);
  });
});
