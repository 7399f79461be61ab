CREATE TABLE acl (
	etag VARCHAR, 
	kind VARCHAR, 
	role VARCHAR, 
	scope JSON, 
	calendar_id VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE calendar (
	"conferenceProperties" JSON, 
	description VARCHAR, 
	etag VARCHAR, 
	kind VARCHAR, 
	location VARCHAR, 
	summary VARCHAR, 
	"timeZone" VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE calendar_list (
	"accessRole" VARCHAR, 
	"backgroundColor" VARCHAR, 
	"colorId" VARCHAR, 
	"conferenceProperties" JSON, 
	"defaultReminders" JSON, 
	deleted BOOLEAN, 
	description VARCHAR, 
	etag VARCHAR, 
	"foregroundColor" VARCHAR, 
	hidden BOOLEAN, 
	kind VARCHAR, 
	location VARCHAR, 
	"notificationSettings" JSON, 
	"primary" BOOLEAN, 
	selected BOOLEAN, 
	summary VARCHAR, 
	"summaryOverride" VARCHAR, 
	"timeZone" VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE event (
	"anyoneCanAddSelf" BOOLEAN, 
	attachments JSON, 
	attendees JSON, 
	"attendeesOmitted" BOOLEAN, 
	"colorId" VARCHAR, 
	"conferenceData" JSON, 
	creator JSON, 
	description VARCHAR, 
	"end" JSON, 
	"endTimeUnspecified" BOOLEAN, 
	etag VARCHAR, 
	"eventType" VARCHAR, 
	"extendedProperties" JSON, 
	"focusTimeProperties" JSON, 
	gadget JSON, 
	"guestsCanInviteOthers" BOOLEAN, 
	"guestsCanModify" BOOLEAN, 
	"guestsCanSeeOtherGuests" BOOLEAN, 
	"hangoutLink" VARCHAR, 
	"htmlLink" VARCHAR, 
	"iCalUID" VARCHAR, 
	kind VARCHAR, 
	location VARCHAR, 
	locked BOOLEAN, 
	organizer JSON, 
	"originalStartTime" JSON, 
	"outOfOfficeProperties" JSON, 
	"privateCopy" BOOLEAN, 
	recurrence JSON, 
	"recurringEventId" VARCHAR, 
	reminders JSON, 
	sequence INTEGER, 
	status VARCHAR, 
	summary VARCHAR, 
	transparency VARCHAR, 
	visibility VARCHAR, 
	calendar_id VARCHAR, 
	id VARCHAR NOT NULL, 
	created VARCHAR, 
	updated VARCHAR, 
	PRIMARY KEY (id)
);

CREATE TABLE setting (
	etag VARCHAR, 
	kind VARCHAR, 
	value VARCHAR, 
	id VARCHAR NOT NULL, 
	PRIMARY KEY (id)
);

