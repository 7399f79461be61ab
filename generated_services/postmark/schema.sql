CREATE TABLE batch_with_template (
	"Messages" JSON, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE bounce (
	"BouncedAt" VARCHAR, 
	"CanActivate" BOOLEAN, 
	"Content" VARCHAR, 
	"Description" VARCHAR, 
	"Details" VARCHAR, 
	"DumpAvailable" BOOLEAN, 
	"Email" VARCHAR, 
	"Inactive" BOOLEAN, 
	"MessageID" VARCHAR, 
	"Name" VARCHAR, 
	"Subject" VARCHAR, 
	"Tag" VARCHAR, 
	"Type" VARCHAR, 
	"TypeCode" INTEGER, 
	"ID" INTEGER NOT NULL, 
	PRIMARY KEY ("ID")
);

CREATE TABLE click (
	"ClickLocation" VARCHAR, 
	"Client" JSON, 
	"Geo" JSON, 
	"OS" JSON, 
	"OriginalLink" VARCHAR, 
	"Platform" VARCHAR, 
	"ReceivedAt" VARCHAR, 
	"Recipient" VARCHAR, 
	"Tag" VARCHAR, 
	"UserAgent" VARCHAR, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE inboundrule (
	"Rule" VARCHAR, 
	"ID" INTEGER NOT NULL, 
	PRIMARY KEY ("ID")
);

CREATE TABLE open (
	"Client" JSON, 
	"FirstOpen" BOOLEAN, 
	"Geo" JSON, 
	"OS" JSON, 
	"Platform" VARCHAR, 
	"ReceivedAt" VARCHAR, 
	"Recipient" VARCHAR, 
	"Tag" VARCHAR, 
	"UserAgent" VARCHAR, 
	"MessageID" VARCHAR NOT NULL, 
	PRIMARY KEY ("MessageID")
);

CREATE TABLE template (
	"Active" BOOLEAN, 
	"Alias" VARCHAR, 
	"Name" VARCHAR NOT NULL, 
	"TemplateId" FLOAT, 
	"HtmlBody" VARCHAR, 
	"Subject" VARCHAR NOT NULL, 
	"TextBody" VARCHAR, 
	"AssociatedServerId" INTEGER, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

