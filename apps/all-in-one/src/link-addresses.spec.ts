import { linkAddresses } from './link-addresses';

describe('linkAddresses', () => {
  it('follows the chosen port for what is unset', () => {
    expect(linkAddresses({}, 4100)).toEqual({ APP_URL: 'http://localhost:4100', BASE_URL: 'http://localhost:4100', derived: ['APP_URL', 'BASE_URL'] });
    expect(linkAddresses({ APP_URL: '' }, 3000).derived).toEqual(['APP_URL', 'BASE_URL']);
  });

  it('keeps what the operator set', () => {
    expect(linkAddresses({ APP_URL: 'https://app.example.com', BASE_URL: 'https://api.example.com' }, 4100)).toEqual({
      APP_URL: 'https://app.example.com',
      BASE_URL: 'https://api.example.com',
      derived: [],
    });
    expect(linkAddresses({ BASE_URL: 'https://api.example.com' }, 4100)).toEqual({
      APP_URL: 'http://localhost:4100',
      BASE_URL: 'https://api.example.com',
      derived: ['APP_URL'],
    });
  });
});
