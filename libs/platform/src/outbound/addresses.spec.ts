import { forbiddenAddressReason } from './addresses';

describe('forbiddenAddressReason', () => {
  it.each([
    ['0.0.0.0', /this network/],
    ['0.1.2.3', /this network/],
    ['10.0.0.1', /private/],
    ['10.255.255.255', /private/],
    ['100.64.0.1', /carrier-grade/],
    ['100.127.255.254', /carrier-grade/],
    ['100.100.100.200', /carrier-grade/],
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['169.254.169.254', /metadata/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.0.0.170', /IETF/],
    ['192.0.2.10', /documentation/],
    ['192.168.1.1', /private/],
    ['198.18.0.1', /benchmarking/],
    ['198.19.255.255', /benchmarking/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /broadcast/],
  ])('refuses IPv4 %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toMatch(reason);
  });

  it.each(['1.1.1.1', '8.8.8.8', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.169.0.1', '198.17.255.255', '198.20.0.0', '223.255.255.255', '93.184.216.34', '11.0.0.1', '126.255.255.255', '128.0.0.1'])(
    'allows public IPv4 %s',
    (address) => {
      expect(forbiddenAddressReason(address)).toBeNull();
    },
  );

  it.each([
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['[::1]', /loopback/],
    ['::ffff:127.0.0.1', /IPv4-mapped/],
    ['::ffff:7f00:1', /IPv4-mapped/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['64:ff9b::a9fe:a9fe', /NAT64/],
    ['64:ff9b:1::1', /NAT64/],
    ['100::1', /discard/],
    ['2001:db8::1', /documentation/],
    ['2002:7f00:1::', /6to4/],
    ['fc00::1', /unique local/],
    ['fd00:ec2::254', /unique local/],
    ['fdff:ffff::1', /unique local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
  ])('refuses IPv6 %s', (address, reason) => {
    expect(forbiddenAddressReason(address)).toMatch(reason);
  });

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:80b::200e', 'fbff::1', 'fe00::1', '2001:db9::1', '64:ff9c::1'])('allows public IPv6 %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull();
  });

  it.each(['localhost', 'example.com', '', '256.0.0.1', '1.2.3', '::g'])('refuses %j, which is not an address', (address) => {
    expect(forbiddenAddressReason(address)).toBe('not an IP address');
  });
});
