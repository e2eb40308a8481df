import { appAddressWarning, servedAddressWarning } from './app-address';

describe('appAddressWarning', () => {
  const smtp = 'smtp://mail.example.com:587';

  it('says nothing where no e-mail goes out', () => {
    expect(appAddressWarning({ appUrl: 'http://localhost:3000', appUrlSet: false, smtpUrl: null })).toBeNull();
  });

  it('warns when e-mail goes out and APP_URL is unset, naming the address the links would carry', () => {
    expect(appAddressWarning({ appUrl: 'http://localhost:3000', appUrlSet: false, smtpUrl: smtp })).toMatch(
      /^APP_URL is not set: .*http:\/\/localhost:3000.*set APP_URL/,
    );
  });

  it.each(['http://localhost:4000', 'http://127.0.0.1:3000', 'http://[::1]:3000', 'http://app.localhost'])(
    'warns when e-mail goes out and APP_URL is %s',
    (appUrl) => {
      expect(appAddressWarning({ appUrl, appUrlSet: true, smtpUrl: smtp })).toContain('an address of this machine');
    },
  );

  it('accepts an address others can open', () => {
    expect(appAddressWarning({ appUrl: 'https://decisions.example.com', appUrlSet: true, smtpUrl: smtp })).toBeNull();
    expect(appAddressWarning({ appUrl: 'http://10.0.0.5:3000', appUrlSet: true, smtpUrl: smtp })).toBeNull();
  });
});

describe('servedAddressWarning', () => {
  it('is quiet at APP_URL’s own origin and at another loopback spelling of it', () => {
    expect(servedAddressWarning('https://app.example.com', { protocol: 'https', host: 'app.example.com' })).toBeNull();
    expect(servedAddressWarning('http://localhost:3000', { protocol: 'http', host: '127.0.0.1:3000' })).toBeNull();
  });

  it('names both origins when the application is opened elsewhere', () => {
    expect(servedAddressWarning('http://localhost:3000', { protocol: 'http', host: '127.0.0.1:4100' })).toBe(
      'the application was opened at http://127.0.0.1:4100 but APP_URL is http://localhost:3000: invitation links and e-mailed links point to http://localhost:3000; set APP_URL to the address people open the application at',
    );
    expect(servedAddressWarning('https://app.example.com', { protocol: 'http', host: 'app.example.com' })).toContain('opened at http://app.example.com');
  });

  it('ignores a Host header that is not an address', () => {
    expect(servedAddressWarning('https://app.example.com', { protocol: 'https', host: 'bad host/x' })).toBeNull();
  });
});
